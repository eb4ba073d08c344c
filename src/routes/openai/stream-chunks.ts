// OpenAI's and Workers AI's streamed chunks for chat completions, completions and /v1/run:
// pre-serialized per-token frames, usage as asked (stream_options), echo and token ids.
import type { z } from "@hono/zod-openapi";
import { codePoints, completionLogProbs } from "../../protocols/vllm-completions";
import type { PromptTokenLogprobs, Usage } from "../../tasks/text-generation/text-generation";
import { jsonTemplate, type StreamFormat, type TextDelta } from "./generation-stream";
import {
  chatLogprobs,
  toolFinishReason,
  type ChatLogprobs,
  type CompletionLogprobs,
  type Done,
  type PerChoice,
  type ResponseIdentity,
} from "./responses";
import {
  toolReader,
  type ToolCall,
  type ToolMode,
  type ToolReading,
  type ToolTextReader,
} from "../../tasks/text-generation/tool-parsers";

/** How a request asked its stream to be framed. */
export interface ChunkOptions {
  /**
   * stream_options.include_usage: every chunk carries `usage: null` and a last chunk `choices: []`
   * the usage (OpenAI).
   */
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
  /**
   * Chat with tools in use: deltas carry `tool_calls` (the arguments as they come), and with "auto"
   * the content before them.
   */
  toolMode?: ToolMode | undefined;
}

const usageChunk = (base: object, usage: Usage, includeUsage: boolean) =>
  includeUsage ? [{ ...base, choices: [], usage }] : [];

/** A pre-serialized per-token frame for each choice index, made when the index first streams. */
function perIndex(
  make: (index: number) => (text: string) => string,
): (text: string, index: number) => string {
  const made: ((text: string) => string)[] = [];
  return (text, index) => (made[index] ??= make(index))(text);
}

/**
 * Each chunk's usage member: OpenAI's null, or vLLM's continuous count of the choice's tokens so
 * far.
 */
function usageMembers({ includeUsage, continuousUsage }: ChunkOptions) {
  const counted: number[] = [];
  const members = (index: number) => {
    if (!includeUsage) return {};
    if (continuousUsage === undefined) return { usage: null };
    const completion = counted[index] ?? 0;
    const prompt = continuousUsage.promptTokens(index);
    return {
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      },
    };
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
  // With return_token_ids, each choice's chunks carry their tokens' ids (vLLM's
  // ChatCompletionResponseStreamChoice).
  const chunk = (
    index: number,
    delta: object,
    finishReason: Done["finishReason"] | "tool_calls" | null,
    stopReason?: Done["stopReason"],
    logprobs: z.infer<typeof ChatLogprobs> = null,
    tokenIds?: readonly number[],
  ) => ({
    ...base,
    choices: [
      {
        index,
        delta,
        logprobs,
        finish_reason: finishReason,
        ...(stopReason === undefined ? {} : { stop_reason: stopReason }),
        ...(tokenIds === undefined ? {} : { token_ids: tokenIds }),
      },
    ],
    ...usage.members(index),
  });
  const textChunk = perIndex((index) =>
    jsonTemplate((slot) => chunk(index, { content: slot }, null)),
  );
  if (options.toolMode !== undefined)
    return toolCallChunks(
      options.toolMode,
      chunk,
      usage.count,
      withIds ? promptIds : undefined,
      options.includeUsage,
      base,
    );
  return {
    // As vLLM's: each choice's role chunk carries the prompt's ids.
    opening: (index) => [
      {
        ...chunk(index, { role: "assistant", content: "" }, null),
        ...(withIds ? { prompt_token_ids: promptIds(index) } : {}),
      },
    ],
    text: ({ text, logprobs, tokenIds }, index) => {
      if (logprobs === undefined && templated) return [textChunk(text, index)];
      usage.count(index, tokenIds);
      return [
        chunk(
          index,
          { content: text },
          null,
          undefined,
          logprobs === undefined ? null : chatLogprobs(logprobs),
          withIds ? (tokenIds ?? []) : undefined,
        ),
      ];
    },
    done: (done, index) => [
      chunk(index, {}, done.finishReason, done.stopReason, null, withIds ? [] : undefined),
    ],
    usage: (total) => usageChunk(base, total, options.includeUsage),
  };
}

type ChatChunk = (
  index: number,
  delta: object,
  finishReason: Done["finishReason"] | "tool_calls" | null,
  stopReason?: Done["stopReason"],
  logprobs?: z.infer<typeof ChatLogprobs>,
  tokenIds?: readonly number[],
) => object;

/**
 * A tool choice's chunks, as OpenAI streams calls: the role chunk (content null when a call is
 * forced), then `tool_calls` deltas — a call's id, type and name first, then its arguments as
 * they are written — and, with "auto", the content before the calls. Tokens that write only a
 * call's structure send nothing (unless their logprobs or ids were asked for); what the reader
 * held back at the end goes out before the finish.
 */
function toolCallChunks(
  mode: ToolMode,
  chunk: ChatChunk,
  count: (index: number, ids: readonly number[] | undefined) => void,
  promptIds: PerChoice<readonly number[]> | undefined,
  includeUsage: boolean,
  base: object,
): StreamFormat {
  const readers: ToolTextReader[] = [];
  const reader = (index: number) => (readers[index] ??= toolReader(mode));
  const withIds = promptIds !== undefined;
  const delta = ({ content, calls }: ToolReading) => ({
    ...(content === "" ? {} : { content }),
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  });
  return {
    opening: (index) => [
      {
        ...chunk(index, { role: "assistant", content: mode.kind === "auto" ? "" : null }, null),
        ...(withIds ? { prompt_token_ids: promptIds(index) } : {}),
      },
    ],
    text: ({ text, logprobs, tokenIds }, index) => {
      count(index, tokenIds);
      const reading = reader(index).push(text);
      if (
        reading.content === "" &&
        reading.calls.length === 0 &&
        logprobs === undefined &&
        !withIds
      )
        return [];
      return [
        chunk(
          index,
          delta(reading),
          null,
          undefined,
          logprobs === undefined ? null : chatLogprobs(logprobs),
          withIds ? (tokenIds ?? []) : undefined,
        ),
      ];
    },
    done: (done, index) => {
      const rest = reader(index).end();
      const held =
        rest.content === "" && rest.calls.length === 0
          ? []
          : [chunk(index, delta(rest), null, undefined, null, withIds ? [] : undefined)];
      return [
        ...held,
        chunk(
          index,
          {},
          toolFinishReason(done.finishReason, mode, reader(index).calls.length),
          done.stopReason,
          null,
          withIds ? [] : undefined,
        ),
      ];
    },
    usage: (total) => usageChunk(base, total, includeUsage),
  };
}

export function completionChunks(who: ResponseIdentity, options: ChunkOptions): StreamFormat {
  const base = { ...who, object: "text_completion" };
  const { promptIds } = options;
  const usage = usageMembers(options);
  const templated = promptIds === undefined && !usage.continuous;
  const chunk = (
    index: number,
    text: string,
    finishReason: Done["finishReason"] | null,
    stopReason?: Done["stopReason"],
    logprobs: z.infer<typeof CompletionLogprobs> = null,
    ids?: { prompt?: readonly number[]; tokens: readonly number[] },
  ) => ({
    ...base,
    choices: [
      {
        index,
        text,
        logprobs,
        finish_reason: finishReason,
        ...(stopReason === undefined ? {} : { stop_reason: stopReason }),
        // vLLM's CompletionResponseStreamChoice: the prompt's ids on a choice's first chunk, each
        // chunk its tokens' ids.
        ...(ids?.prompt === undefined ? {} : { prompt_token_ids: ids.prompt }),
        ...(ids === undefined ? {} : { token_ids: ids.tokens }),
      },
    ],
    ...usage.members(index),
  });
  const textChunk = perIndex((index) => jsonTemplate((slot) => chunk(index, slot, null)));
  /**
   * Per choice, the text sent before, in code points: where a chunk's offsets start (vLLM's
   * previous_text_lens).
   */
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
    if (logprobs === undefined)
      return chunk(index, text, null, undefined, null, idsOf(index, tokenIds ?? []));
    const offset = sent[index] ?? 0;
    sent[index] = offset + codePoints(text);
    return chunk(
      index,
      text,
      null,
      undefined,
      completionLogProbs(logprobs, offset),
      idsOf(index, tokenIds ?? []),
    );
  };
  const { echo } = options;
  /** The echoed prompt's chunk: its text, and its tokens' logprobs when scored. */
  const echoed = (index: number, logprobs: readonly PromptTokenLogprobs[] | undefined) => {
    const text = echo?.text(index) ?? "";
    sent[index] = codePoints(text);
    return chunk(
      index,
      text,
      null,
      undefined,
      logprobs === undefined ? null : completionLogProbs(logprobs),
      idsOf(index, []),
    );
  };
  return {
    opening: (index) => (echo !== undefined && !echo.scored ? [echoed(index, undefined)] : []),
    prompt: (event, index) => (echo?.scored ? [echoed(index, event.logprobs)] : []),
    // Only chunks with logprobs need the offsets: text without them comes only after the last
    // token's.
    text: (delta, index) => [
      delta.logprobs === undefined && templated ? textChunk(delta.text, index) : full(delta, index),
    ],
    done: (done, index) => [
      chunk(index, "", done.finishReason, done.stopReason, null, idsOf(index, [])),
    ],
    usage: (total) => usageChunk(base, total, options.includeUsage),
  };
}

const responseChunk = jsonTemplate((response) => ({ response }));

/**
 * Workers AI's text-generation stream: `data: {"response": "…"}` per delta, the usage last.
 * With tools, the text before the calls as the deltas, and the calls once whole, in one
 * `{"response": "", "tool_calls": […]}` event before the usage (`call`: each one's shape).
 */
export function workersAiChunks(tools?: {
  mode: ToolMode;
  call: (call: ToolCall) => object;
}): StreamFormat {
  if (tools === undefined) {
    return {
      opening: () => [],
      text: ({ text }) => [responseChunk(text)],
      done: () => [],
      usage: (usage) => [{ response: "", usage }],
    };
  }
  const reader = toolReader(tools.mode);
  const content = (text: string) => (text === "" ? [] : [responseChunk(text)]);
  return {
    opening: () => [],
    text: ({ text }) => content(reader.push(text).content),
    // Each call with its index, as OpenAI's stream deltas have it: workers-ai-provider joins a
    // streamed call's pieces by index (a call without one is read as index 0).
    done: () => [
      ...content(reader.end().content),
      ...(reader.calls.length === 0
        ? []
        : [
            {
              response: "",
              tool_calls: reader.calls.map((call, index) => ({ index, ...tools.call(call) })),
            },
          ]),
    ],
    usage: (usage) => [{ response: "", usage }],
  };
}
