// vLLM's streamed completion chunk as the edge reads it from a generation origin: the schema,
// the same check by hand for the per-token path, and what its usage chunk reports.
import { z } from "zod";

/**
 * vLLM's CompletionLogProbs: per token, its name, its logprob and a dict of the likeliest (the
 * sampled one first).
 */
export const LogProbs = z.object({
  tokens: z.array(z.string()),
  token_logprobs: z.array(z.number().nullable()),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish(),
  text_offset: z.array(z.number()).nullish(),
});
/** A chunk's logprobs, as vLLM writes them. */
export type ChunkLogProbs = z.infer<typeof LogProbs>;

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

/**
 * The prompt tokens the origin's prefix cache served, from its usage chunk (undefined: not
 * reported).
 */
export function cachedTokensOf(chunk: CompletionChunk): number | undefined {
  return chunk.usage?.prompt_tokens_details?.cached_tokens ?? undefined;
}
