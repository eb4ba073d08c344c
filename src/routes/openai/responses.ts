// OpenAI response and chunk shapes for chat completions and completions.
import { z } from "@hono/zod-openapi";
import { clampLogprob, codePoints, completionLogProbs } from "../../protocols/vllm-completions";
import type { PromptTokenLogprobs, TextEvent, TokenLogprobs, TokenText, Usage } from "../../tasks/text-generation/text-generation";
import { jsonTemplate, totalUsage, type Collected, type StreamFormat, type TextDelta } from "./generation-stream";

type Done = Extract<TextEvent, { type: "done" }>;

export const UsageSchema = z
  .object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z
      .object({ cached_tokens: z.number().int() })
      .optional()
      .openapi({ description: "The prompt tokens the GPU origin's prefix cache served (as OpenAI's; vLLM's with --enable-prompt-tokens-details), when the origin reports them" }),
  })
  .openapi("Usage");
const FinishReason = z.enum(["stop", "length"]);
/** vLLM's extra field, beside OpenAI's: what stopped generation. */
const StopReason = z
  .union([z.string(), z.number().int(), z.null()])
  .openapi({ description: "vLLM: the stop string that matched, or the stop token id that ended generation (not the model's EOS); null otherwise" });


const TopLogprob = z
  .object({
    token: z.string().openapi({ description: "The token's text alone (an unfinished UTF-8 character reads as U+FFFD; see bytes)" }),
    logprob: z.number().openapi({ description: "Its log-probability under the model (before temperature and truncation), at least -9999" }),
    bytes: z.array(z.number().int()).nullable().openapi({ description: "The token's own bytes" }),
  })
  .openapi("TopLogprob");
const ChatTokenLogprob = TopLogprob.extend({ top_logprobs: z.array(TopLogprob).openapi({ description: "The top_logprobs likeliest tokens at this position, likeliest first" }) }).openapi(
  "ChatCompletionTokenLogprob",
);
const ChatLogprobs = z
  .object({ content: z.array(ChatTokenLogprob).nullable(), refusal: z.null() })
  .nullable()
  .openapi("ChatCompletionLogprobs", { description: "With logprobs: true, one entry per generated token (a stop token included); null otherwise" });
const CompletionLogprobs = z
  .object({
    text_offset: z.array(z.number().int()).openapi({ description: "As vLLM's: where each token starts, counting the text sent before and the tokens' own lengths" }),
    token_logprobs: z.array(z.number().nullable()),
    tokens: z.array(z.string()),
    top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).openapi({ description: "Per token: itself, then the `logprobs` likeliest tokens (up to logprobs + 1 entries)" }),
  })
  .nullable()
  .openapi("CompletionLogprobs", {
    description: "With logprobs: n, one entry per generated token (a stop token included), after one per prompt token with echo (the first: null logprob and dict); null otherwise",
  });

/** vLLM's return_token_ids: the ids the model was given, and those it generated. */
const PromptTokenIds = z.array(z.number().int()).optional().openapi({ description: "vLLM, with return_token_ids: the prompt's token ids as the model was given them (after the chat template)" });
const TokenIds = z.array(z.number().int()).optional().openapi({ description: "vLLM, with return_token_ids: the generated token ids, a stop token included (as many as the usage's completion_tokens)" });

/** A value for each choice, by its index: a batch's choices have prompts of their own. */
export type PerChoice<T> = (index: number) => T;

/** What the response says besides the text, as the request asked. */
export interface ResponseExtras {
  logprobs: boolean;
  /** return_token_ids: the prompt's ids; undefined when not asked. */
  promptIds?: PerChoice<readonly number[]> | undefined;
  /** echo: the prompt's text, before each choice's (with logprobs, its tokens' before the choice's). */
  echo?: PerChoice<string> | undefined;
  /** Choices per prompt (a batch's `n`): the usage counts each prompt once. Default: all of them. */
  perPrompt?: number | undefined;
}

const topLogprob = ({ token, bytes, logprob }: TokenText) => ({ token, logprob: clampLogprob(logprob), bytes });

/** OpenAI's chat logprobs: each token, and its top_logprobs alternatives. */
export function chatLogprobs(logprobs: readonly TokenLogprobs[]): z.infer<typeof ChatLogprobs> {
  return { content: logprobs.map((entry) => ({ ...topLogprob(entry), top_logprobs: entry.top.map(topLogprob) })), refusal: null };
}

export const ChatCompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal("assistant"), content: z.string(), refusal: z.null() }),
        logprobs: ChatLogprobs,
        finish_reason: FinishReason,
        stop_reason: StopReason,
        token_ids: TokenIds,
      }),
    ),
    usage: UsageSchema,
    prompt_token_ids: PromptTokenIds,
  })
  .openapi("ChatCompletionResponse");

export const CompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("text_completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        text: z.string(),
        logprobs: CompletionLogprobs,
        finish_reason: FinishReason,
        stop_reason: StopReason,
        prompt_token_ids: PromptTokenIds,
        token_ids: TokenIds,
      }),
    ),
    usage: UsageSchema,
  })
  .openapi("CompletionResponse");

export interface ResponseIdentity {
  id: string;
  created: number;
  model: string;
}

export function identity(prefix: string, model: string): ResponseIdentity {
  return { id: `${prefix}-${crypto.randomUUID().replaceAll("-", "")}`, created: Math.floor(Date.now() / 1000), model };
}

const tokenIdsOf = (choice: Collected, extras: ResponseExtras) => (extras.promptIds === undefined ? {} : { token_ids: choice.tokenIds ?? [] });

export function chatCompletion(who: ResponseIdentity, choices: readonly Collected[], extras: ResponseExtras = { logprobs: false }): z.infer<typeof ChatCompletionResponse> {
  return {
    ...who,
    object: "chat.completion",
    choices: choices.map((choice, index) => ({
      index,
      message: { role: "assistant", content: choice.text, refusal: null },
      logprobs: extras.logprobs ? chatLogprobs(choice.logprobs ?? []) : null,
      finish_reason: choice.done.finishReason,
      stop_reason: choice.done.stopReason,
      ...tokenIdsOf(choice, extras),
    })),
    usage: totalUsage(choices.map(({ done }) => done.usage)),
    // As vLLM's ChatCompletionResponse: the prompt's ids once, beside the usage.
    ...(extras.promptIds === undefined ? {} : { prompt_token_ids: [...extras.promptIds(0)] }),
  };
}

export function completion(who: ResponseIdentity, choices: readonly Collected[], extras: ResponseExtras = { logprobs: false }): z.infer<typeof CompletionResponse> {
  return {
    ...who,
    object: "text_completion",
    choices: choices.map((choice, index) => ({
      index,
      text: (extras.echo?.(index) ?? "") + choice.text,
      logprobs: extras.logprobs ? completionLogProbs([...(choice.promptLogprobs ?? []), ...(choice.logprobs ?? [])]) : null,
      finish_reason: choice.done.finishReason,
      stop_reason: choice.done.stopReason,
      // As vLLM's CompletionResponseChoice: each choice with the prompt's ids and its own.
      ...(extras.promptIds === undefined ? {} : { prompt_token_ids: [...extras.promptIds(index)] }),
      ...tokenIdsOf(choice, extras),
    })),
    usage: totalUsage(choices.map(({ done }) => done.usage), extras.perPrompt),
  };
}

/** How a request asked its stream to be framed. */
export interface ChunkOptions {
  /** stream_options.include_usage: every chunk carries `usage: null` and a last chunk `choices: []` the usage (OpenAI). */
  includeUsage: boolean;
  /**
   * vLLM's stream_options.continuous_usage_stats (with include_usage): every chunk of a choice
   * carries the usage so far instead of null — the prompt's tokens and the choice's own tokens
   * (its text events then carry their token ids, to be counted).
   */
  continuousUsage?: { promptTokens: PerChoice<number> } | undefined;
  /** return_token_ids: the prompt's ids; undefined when not asked. */
  promptIds?: PerChoice<readonly number[]> | undefined;
  /**
   * Completions' echo: the prompt's text on each choice's first chunk — with its tokens'
   * logprobs when `scored` (vLLM's echo with logprobs), else alone before the first token.
   */
  echo?: { text: PerChoice<string>; scored: boolean } | undefined;
}

const usageChunk = (base: object, usage: Usage, includeUsage: boolean) => (includeUsage ? [{ ...base, choices: [], usage }] : []);

/** A pre-serialized per-token frame for each choice index, made when the index first streams. */
function perIndex(make: (index: number) => (text: string) => string): (text: string, index: number) => string {
  const made: ((text: string) => string)[] = [];
  return (text, index) => (made[index] ??= make(index))(text);
}

/** Each chunk's usage member: OpenAI's null, or vLLM's continuous count of the choice's tokens so far. */
function usageMembers({ includeUsage, continuousUsage }: ChunkOptions) {
  const counted: number[] = [];
  const members = (index: number) => {
    if (!includeUsage) return {};
    if (continuousUsage === undefined) return { usage: null };
    const completion = counted[index] ?? 0;
    const prompt = continuousUsage.promptTokens(index);
    return { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
  };
  const count = (index: number, tokenIds: readonly number[] | undefined) => {
    counted[index] = (counted[index] ?? 0) + (tokenIds?.length ?? 0);
  };
  return { members, count, continuous: includeUsage && continuousUsage !== undefined };
}

export function chatChunks(who: ResponseIdentity, options: ChunkOptions): StreamFormat {
  const base = { ...who, object: "chat.completion.chunk" };
  const { promptIds } = options;
  const withIds = promptIds !== undefined;
  const usage = usageMembers(options);
  // The fast per-token frame holds nothing that changes but the text.
  const templated = !withIds && !usage.continuous;
  // The last chunk carries vLLM's stop_reason beside finish_reason; per-token chunks stay OpenAI's.
  // With return_token_ids, each choice's chunks carry their tokens' ids (vLLM's ChatCompletionResponseStreamChoice).
  const chunk = (index: number, delta: object, finishReason: Done["finishReason"] | null, stopReason?: Done["stopReason"], logprobs: z.infer<typeof ChatLogprobs> = null, tokenIds?: readonly number[]) => ({
    ...base,
    choices: [{ index, delta, logprobs, finish_reason: finishReason, ...(stopReason === undefined ? {} : { stop_reason: stopReason }), ...(tokenIds === undefined ? {} : { token_ids: tokenIds }) }],
    ...usage.members(index),
  });
  const textChunk = perIndex((index) => jsonTemplate((slot) => chunk(index, { content: slot }, null)));
  return {
    // As vLLM's: each choice's role chunk carries the prompt's ids.
    opening: (index) => [{ ...chunk(index, { role: "assistant", content: "" }, null), ...(withIds ? { prompt_token_ids: promptIds(index) } : {}) }],
    text: ({ text, logprobs, tokenIds }, index) => {
      if (logprobs === undefined && templated) return [textChunk(text, index)];
      usage.count(index, tokenIds);
      return [chunk(index, { content: text }, null, undefined, logprobs === undefined ? null : chatLogprobs(logprobs), withIds ? (tokenIds ?? []) : undefined)];
    },
    done: (done, index) => [chunk(index, {}, done.finishReason, done.stopReason, null, withIds ? [] : undefined)],
    usage: (total) => usageChunk(base, total, options.includeUsage),
  };
}

export function completionChunks(who: ResponseIdentity, options: ChunkOptions): StreamFormat {
  const base = { ...who, object: "text_completion" };
  const { promptIds } = options;
  const usage = usageMembers(options);
  const templated = promptIds === undefined && !usage.continuous;
  const chunk = (index: number, text: string, finishReason: Done["finishReason"] | null, stopReason?: Done["stopReason"], logprobs: z.infer<typeof CompletionLogprobs> = null, ids?: { prompt?: readonly number[]; tokens: readonly number[] }) => ({
    ...base,
    choices: [
      {
        index,
        text,
        logprobs,
        finish_reason: finishReason,
        ...(stopReason === undefined ? {} : { stop_reason: stopReason }),
        // vLLM's CompletionResponseStreamChoice: the prompt's ids on a choice's first chunk, each chunk its tokens' ids.
        ...(ids?.prompt === undefined ? {} : { prompt_token_ids: ids.prompt }),
        ...(ids === undefined ? {} : { token_ids: ids.tokens }),
      },
    ],
    ...usage.members(index),
  });
  const textChunk = perIndex((index) => jsonTemplate((slot) => chunk(index, slot, null)));
  /** Per choice, the text sent before, in code points: where a chunk's offsets start (vLLM's previous_text_lens). */
  const sent: number[] = [];
  /** Per choice, whether its first chunk (with the prompt's ids) went out. */
  const started: boolean[] = [];
  const idsOf = (index: number, tokens: readonly number[]) => {
    if (promptIds === undefined) return undefined;
    const first = started[index] !== true;
    started[index] = true;
    return first ? { prompt: promptIds(index), tokens } : { tokens };
  };
  const full = ({ text, logprobs, tokenIds }: TextDelta, index: number) => {
    usage.count(index, tokenIds);
    if (logprobs === undefined) return chunk(index, text, null, undefined, null, idsOf(index, tokenIds ?? []));
    const offset = sent[index] ?? 0;
    sent[index] = offset + codePoints(text);
    return chunk(index, text, null, undefined, completionLogProbs(logprobs, offset), idsOf(index, tokenIds ?? []));
  };
  const { echo } = options;
  /** The echoed prompt's chunk: its text, and its tokens' logprobs when scored. */
  const echoed = (index: number, logprobs: readonly PromptTokenLogprobs[] | undefined) => {
    const text = echo?.text(index) ?? "";
    sent[index] = codePoints(text);
    return chunk(index, text, null, undefined, logprobs === undefined ? null : completionLogProbs(logprobs), idsOf(index, []));
  };
  return {
    opening: (index) => (echo !== undefined && !echo.scored ? [echoed(index, undefined)] : []),
    prompt: (event, index) => (echo?.scored ? [echoed(index, event.logprobs)] : []),
    // Only chunks with logprobs need the offsets: text without them comes only after the last token's.
    text: (delta, index) => [delta.logprobs === undefined && templated ? textChunk(delta.text, index) : full(delta, index)],
    done: (done, index) => [chunk(index, "", done.finishReason, done.stopReason, null, idsOf(index, []))],
    usage: (total) => usageChunk(base, total, options.includeUsage),
  };
}

const responseChunk = jsonTemplate((response) => ({ response }));

/** Workers AI's text-generation stream: `data: {"response": "…"}` per delta, the usage last. */
export function workersAiChunks(): StreamFormat {
  return {
    opening: () => [],
    text: ({ text }) => [responseChunk(text)],
    done: () => [],
    usage: (usage) => [{ response: "", usage }],
  };
}
