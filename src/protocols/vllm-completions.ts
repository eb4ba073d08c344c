// vLLM's OpenAI-compatible /v1/completions as the edge speaks it to a generation origin: the prompt
// as token ids, token ids back in every chunk, field names vLLM's own.
import { z } from "zod";
import type { GenerationRequest, TokenLogprob } from "../generation/generation-request";

/**
 * The request body for one streamed generation.
 *
 * CompletionRequest's `return_token_ids`, `stop_token_ids`, `top_k`, `min_p`, the three penalties,
 * `logit_bias`, `allowed_token_ids`, `stream_options`, and `structured_outputs`.
 */
export function completionRequest(model: string, request: GenerationRequest) {
  const { sampling } = request;
  // One count for both (vLLM's echo scores the prompt with the request's logprobs); the steps keep
  // each one's own.
  const asked =
    request.promptLogprobs === undefined
      ? request.logprobs
      : Math.max(request.logprobs ?? 0, request.promptLogprobs);
  return {
    model,
    prompt: [...request.promptIds],
    // The prompt's logprobs alone (max_tokens 0) are read off the first chunk of a one-token
    // request.
    max_tokens: Math.max(1, request.maxTokens),
    temperature: sampling.temperature,
    top_p: sampling.topP,
    // vLLM: 0 or -1 disables top-k.
    top_k: sampling.topK > 0 ? sampling.topK : -1,
    min_p: sampling.minP,
    ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
    // Sent only when set: their neutral values are vLLM's defaults.
    ...((sampling.presencePenalty ?? 0) === 0
      ? {}
      : { presence_penalty: sampling.presencePenalty }),
    ...((sampling.frequencyPenalty ?? 0) === 0
      ? {}
      : { frequency_penalty: sampling.frequencyPenalty }),
    ...((sampling.repetitionPenalty ?? 1) === 1
      ? {}
      : { repetition_penalty: sampling.repetitionPenalty }),
    ...(sampling.logitBias === undefined || sampling.logitBias.length === 0
      ? {}
      : {
          logit_bias: Object.fromEntries(
            sampling.logitBias.map(([id, bias]) => [String(id), bias]),
          ),
        }),
    ...(sampling.allowedTokenIds === undefined
      ? {}
      : { allowed_token_ids: [...sampling.allowedTokenIds] }),
    stop_token_ids: [...request.stopTokenIds],
    ignore_eos: request.ignoreEos ?? false,
    ...(request.minTokens ? { min_tokens: request.minTokens } : {}),
    // Ids, not text, name the tokens of the logprobs: the edge has the tokenizer.
    ...(asked === undefined ? {} : { logprobs: asked, return_tokens_as_token_ids: true }),
    // The prompt's logprobs come as vLLM's echo gives them: on the first chunk, before its tokens'
    // (CompletionRequest.to_sampling_params: with echo, prompt_logprobs = logprobs).
    ...(request.promptLogprobs === undefined ? {} : { echo: true }),
    // vLLM's structured outputs (vllm/entrypoints/openai/completion/protocol.py CompletionRequest
    // .structured_outputs; vllm/sampling_params.py StructuredOutputsParams), compact JSON as ours.
    ...(request.structured === undefined
      ? {}
      : { structured_outputs: { ...request.structured.spec, disable_any_whitespace: true } }),
    stream: true,
    stream_options: { include_usage: true },
    return_token_ids: true,
    // Text is the edge's job; special tokens are kept so ids and text never disagree.
    skip_special_tokens: false,
  };
}

/**
 * vLLM's CompletionLogProbs: per token, its name, its logprob and a dict of the likeliest (the
 * sampled one first).
 */
const LogProbs = z.object({
  tokens: z.array(z.string()),
  token_logprobs: z.array(z.number().nullable()),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish(),
  text_offset: z.array(z.number()).nullish(),
});

const StreamChoice = z.object({
  index: z.number().int(),
  text: z.string().optional(),
  logprobs: LogProbs.nullish(),
  token_ids: z.array(z.number().int().min(0)).nullish(),
  finish_reason: z.string().nullish(),
  stop_reason: z.union([z.number().int(), z.string()]).nullish(),
});

/**
 * Chunks as vLLM's serving_completion.py writes them: `data: {json}`, `token_ids`, `finish_reason`,
 * `stop_reason`, `prompt_token_ids` in the first chunk, a final usage chunk with `choices: []`,
 * errors inside the stream as `data:` events, then `data: [DONE]`; logprobs as
 * `_create_completion_logprobs` writes them, tokens as "token_id:N" with
 * `return_tokens_as_token_ids`.
 */
export const CompletionChunk = z.object({
  id: z.string().optional(),
  object: z.string().optional(),
  choices: z.array(StreamChoice),
  usage: z
    .object({
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int().optional(),
      // vLLM with --enable-prompt-tokens-details, when its prefix cache served part of the prompt.
      prompt_tokens_details: z
        .object({ cached_tokens: z.number().int().min(0).nullish() })
        .nullish(),
    })
    .nullish(),
  prompt_token_ids: z.array(z.number().int()).nullish(),
});
export type CompletionChunk = z.infer<typeof CompletionChunk>;

const isInt = (value: unknown): value is number => Number.isSafeInteger(value);
const isIds = (value: unknown, min = -Infinity): value is number[] =>
  Array.isArray(value) && value.every((id) => isInt(id) && id >= min);
const nullish = (value: unknown): value is null | undefined =>
  value === null || value === undefined;
const optionalString = (value: unknown) => value === undefined || typeof value === "string";
const nullishString = (value: unknown) => nullish(value) || typeof value === "string";

const isNumbers = (value: unknown, nullable: boolean): boolean =>
  Array.isArray(value) &&
  value.every((item) => typeof item === "number" || (nullable && item === null));
const isNumberRecord = (value: unknown): boolean =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((item) => typeof item === "number");

function isLogProbs(value: unknown): boolean {
  if (nullish(value)) return true;
  if (typeof value !== "object") return false;
  const logprobs: Partial<Record<keyof z.infer<typeof LogProbs>, unknown>> = value;
  return (
    Array.isArray(logprobs.tokens) &&
    logprobs.tokens.every((token) => typeof token === "string") &&
    isNumbers(logprobs.token_logprobs, true) &&
    (nullish(logprobs.top_logprobs) ||
      (Array.isArray(logprobs.top_logprobs) &&
        logprobs.top_logprobs.every((top) => top === null || isNumberRecord(top)))) &&
    (nullish(logprobs.text_offset) || isNumbers(logprobs.text_offset, false))
  );
}

function isStreamChoice(value: unknown): value is z.infer<typeof StreamChoice> {
  if (typeof value !== "object" || value === null) return false;
  const choice: Partial<Record<keyof z.infer<typeof StreamChoice>, unknown>> = value;
  return (
    isInt(choice.index) &&
    isLogProbs(choice.logprobs) &&
    optionalString(choice.text) &&
    (nullish(choice.token_ids) || isIds(choice.token_ids, 0)) &&
    nullishString(choice.finish_reason) &&
    (nullish(choice.stop_reason) ||
      isInt(choice.stop_reason) ||
      typeof choice.stop_reason === "string")
  );
}

/**
 * The CompletionChunk schema checked by hand: it runs once per streamed token, where zod's parse
 * (which also copies the object) was a measurable share of the edge's CPU per token. Accepts
 * exactly what `CompletionChunk.safeParse` accepts (test/unit/protocols/vllm-completions.test.ts);
 * the chunk is returned as parsed (unknown keys kept, not stripped).
 */
export function isCompletionChunk(value: unknown): value is CompletionChunk {
  if (typeof value !== "object" || value === null) return false;
  const chunk: Partial<Record<keyof CompletionChunk, unknown>> = value;
  if (
    !optionalString(chunk.id) ||
    !optionalString(chunk.object) ||
    !Array.isArray(chunk.choices) ||
    !chunk.choices.every(isStreamChoice)
  )
    return false;
  if (!(nullish(chunk.prompt_token_ids) || isIds(chunk.prompt_token_ids))) return false;
  if (nullish(chunk.usage)) return true;
  if (typeof chunk.usage !== "object") return false;
  const usage: Partial<
    Record<"prompt_tokens" | "completion_tokens" | "prompt_tokens_details", unknown>
  > = chunk.usage;
  if (
    !isInt(usage.prompt_tokens) ||
    !(usage.completion_tokens === undefined || isInt(usage.completion_tokens))
  )
    return false;
  if (nullish(usage.prompt_tokens_details)) return true;
  if (typeof usage.prompt_tokens_details !== "object") return false;
  const details: Partial<Record<"cached_tokens", unknown>> = usage.prompt_tokens_details;
  return (
    nullish(details.cached_tokens) || (isInt(details.cached_tokens) && details.cached_tokens >= 0)
  );
}

/** vLLM's CompletionLogProbs, as it writes them (its field order). */
export interface CompletionLogProbs {
  text_offset: number[];
  token_logprobs: Array<number | null>;
  tokens: string[];
  top_logprobs: Array<Record<string, number> | null>;
}

/**
 * A generated token as CompletionLogProbs lists it: its name, and (unless vLLM's None entry) its
 * logprob and the likeliest tokens.
 */
export interface NamedLogprob {
  token: string;
  logprob?: number;
  top?: ReadonlyArray<{ token: string; logprob: number }>;
}

/** vLLM's and OpenAI's floor for a logprob: JSON has no -Infinity. */
export const clampLogprob = (logprob: number) => Math.max(logprob, -9999);

/** Python's len(): code points, as vLLM's text offsets count. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * CompletionLogProbs as vllm/entrypoints/openai/serving_completion.py
 * `_create_completion_logprobs` writes them: each token's dict holds the token itself first,
 * then the likeliest (a token already there keeps its place, as a Python dict's key); each
 * offset adds the previous token's length to `offset`, the text sent before these tokens.
 */
export function completionLogProbs(
  entries: readonly NamedLogprob[],
  offset = 0,
): CompletionLogProbs {
  const out: CompletionLogProbs = {
    text_offset: [],
    token_logprobs: [],
    tokens: [],
    top_logprobs: [],
  };
  let at = offset;
  for (const { token, logprob, top } of entries) {
    out.tokens.push(token);
    out.text_offset.push(at);
    at += codePoints(token);
    if (logprob === undefined) {
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
      continue;
    }
    out.token_logprobs.push(clampLogprob(logprob));
    const dict: Record<string, number> = { [token]: clampLogprob(logprob) };
    for (const other of top ?? [])
      if (!Object.hasOwn(dict, other.token)) dict[other.token] = clampLogprob(other.logprob);
    out.top_logprobs.push(dict);
  }
  return out;
}

const TOKEN_ID = /^token_id:(0|[1-9]\d{0,9})$/;

/**
 * A token named as vLLM names it with return_tokens_as_token_ids ("token_id:N"); undefined
 * otherwise.
 */
function tokenIdOf(token: string): number | undefined {
  const match = TOKEN_ID.exec(token);
  return match === null ? undefined : Number(match[1]);
}

/**
 * A choice's logprobs as the generation capability's (one per id of `ids`, in order): the
 * `count` likeliest of each dict (vLLM's holds the sampled id first, then its top `count`).
 * A string saying what is wrong when they do not name exactly these ids.
 */
export function logprobsOf(
  logprobs: z.infer<typeof LogProbs>,
  ids: readonly number[],
  count: number,
): TokenLogprob[] | string {
  if (logprobs.tokens.length !== ids.length || logprobs.token_logprobs.length !== ids.length)
    return `logprobs for ${logprobs.tokens.length} tokens beside ${ids.length} token_ids`;
  const out: TokenLogprob[] = [];
  for (let i = 0; i < ids.length; i++) {
    const logprob = logprobs.token_logprobs[i];
    if (tokenIdOf(logprobs.tokens[i]!) !== ids[i] || logprob == null)
      return `logprobs token ${JSON.stringify(logprobs.tokens[i])} is not token_id:${ids[i]} with a logprob (return_tokens_as_token_ids unsupported?)`;
    const top: Array<readonly [number, number]> = [];
    for (const [token, value] of Object.entries(logprobs.top_logprobs?.[i] ?? {})) {
      const id = tokenIdOf(token);
      if (id === undefined) return `top_logprobs key ${JSON.stringify(token)} is not a token id`;
      top.push([id, value]);
    }
    top.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    out.push({ logprob, top: top.slice(0, count) });
  }
  return out;
}

/**
 * The prompt's logprobs off vLLM's echoed first chunk: its first `promptIds.length` entries,
 * the first one vLLM's None entry (null logprob and dict), each named by id. The rest of the
 * entries are the chunk's own tokens'. A string saying what is wrong when they do not match.
 */
export function echoedLogprobsOf(
  logprobs: z.infer<typeof LogProbs>,
  promptIds: readonly number[],
  count: number,
): { prompt: Array<TokenLogprob | null>; rest: z.infer<typeof LogProbs> } | string {
  const n = promptIds.length;
  if (logprobs.tokens.length < n || logprobs.token_logprobs.length < n)
    return `echoed logprobs for ${logprobs.tokens.length} tokens beside a prompt of ${n}`;
  if (tokenIdOf(logprobs.tokens[0]!) !== promptIds[0] || logprobs.token_logprobs[0] !== null)
    return "the echoed prompt's first token has a logprob, or is not token_id:N";
  const slice = (from: number, to?: number) => ({
    tokens: logprobs.tokens.slice(from, to),
    token_logprobs: logprobs.token_logprobs.slice(from, to),
    top_logprobs: logprobs.top_logprobs?.slice(from, to) ?? null,
  });
  const scored = logprobsOf(slice(1, n), promptIds.slice(1), count);
  if (typeof scored === "string") return `echoed prompt: ${scored}`;
  return { prompt: [null, ...scored], rest: slice(n) };
}

/**
 * The prompt tokens the origin's prefix cache served, from its usage chunk (undefined: not
 * reported).
 */
export function cachedTokensOf(chunk: CompletionChunk): number | undefined {
  return chunk.usage?.prompt_tokens_details?.cached_tokens ?? undefined;
}

/**
 * vLLM's ErrorResponse: `{"error": {message, type, code}}` (newer) or flat `{object: "error",
 * message, type, code}` (older).
 */
export const ErrorEvent = z.union([
  z.object({
    error: z.object({
      message: z.string(),
      type: z.string().optional(),
      code: z.union([z.number(), z.string()]).nullish(),
    }),
  }),
  z.object({
    object: z.literal("error"),
    message: z.string(),
    type: z.string().optional(),
    code: z.union([z.number(), z.string()]).nullish(),
  }),
]);

/** The message of an error body or event, in either of vLLM's shapes. */
export function errorMessage(event: z.infer<typeof ErrorEvent>): string {
  return "error" in event ? event.error.message : event.message;
}
