// vLLM's OpenAI-compatible /v1/completions as the edge speaks it to a generation origin:
// the prompt as token ids, token ids back in every chunk. Field names are vLLM's own:
// vllm-project/vllm vllm/entrypoints/openai/protocol.py (CompletionRequest with
// `return_token_ids`, `stop_token_ids`, `top_k`, `min_p`, the three penalties, `logit_bias`, `stream_options`;
// CompletionStreamResponse / CompletionResponseStreamChoice with `token_ids`,
// `finish_reason`, `stop_reason`; ErrorResponse) and serving_completion.py (chunks as
// `data: {json}`, `prompt_token_ids` in the first chunk, a final usage chunk with
// `choices: []`, errors inside the stream as `data:` events, then `data: [DONE]`).
import { z } from "zod";
import type { GenerationRequest } from "../runtime/generation";

/** The request body for one streamed generation. */
export function completionRequest(model: string, request: GenerationRequest) {
  const { sampling } = request;
  return {
    model,
    prompt: [...request.promptIds],
    max_tokens: request.maxTokens,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    // vLLM: 0 or -1 disables top-k.
    top_k: sampling.topK > 0 ? sampling.topK : -1,
    min_p: sampling.minP,
    ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
    // Sent only when set: their neutral values are vLLM's defaults.
    ...((sampling.presencePenalty ?? 0) === 0 ? {} : { presence_penalty: sampling.presencePenalty }),
    ...((sampling.frequencyPenalty ?? 0) === 0 ? {} : { frequency_penalty: sampling.frequencyPenalty }),
    ...((sampling.repetitionPenalty ?? 1) === 1 ? {} : { repetition_penalty: sampling.repetitionPenalty }),
    ...(sampling.logitBias === undefined || sampling.logitBias.length === 0 ? {} : { logit_bias: Object.fromEntries(sampling.logitBias.map(([id, bias]) => [String(id), bias])) }),
    stop_token_ids: [...request.stopTokenIds],
    ignore_eos: request.ignoreEos ?? false,
    ...(request.minTokens ? { min_tokens: request.minTokens } : {}),
    stream: true,
    stream_options: { include_usage: true },
    return_token_ids: true,
    // Text is the edge's job; special tokens are kept so ids and text never disagree.
    skip_special_tokens: false,
  };
}

const StreamChoice = z.object({
  index: z.number().int(),
  text: z.string().optional(),
  token_ids: z.array(z.number().int().min(0)).nullish(),
  finish_reason: z.string().nullish(),
  stop_reason: z.union([z.number().int(), z.string()]).nullish(),
});

export const CompletionChunk = z.object({
  id: z.string().optional(),
  object: z.string().optional(),
  choices: z.array(StreamChoice),
  usage: z
    .object({
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int().optional(),
      // vLLM with --enable-prompt-tokens-details, when its prefix cache served part of the prompt.
      prompt_tokens_details: z.object({ cached_tokens: z.number().int().min(0).nullish() }).nullish(),
    })
    .nullish(),
  prompt_token_ids: z.array(z.number().int()).nullish(),
});
export type CompletionChunk = z.infer<typeof CompletionChunk>;

const isInt = (value: unknown): value is number => Number.isSafeInteger(value);
const isIds = (value: unknown, min = -Infinity): value is number[] => Array.isArray(value) && value.every((id) => isInt(id) && id >= min);
const nullish = (value: unknown): value is null | undefined => value === null || value === undefined;
const optionalString = (value: unknown) => value === undefined || typeof value === "string";
const nullishString = (value: unknown) => nullish(value) || typeof value === "string";

function isStreamChoice(value: unknown): value is z.infer<typeof StreamChoice> {
  if (typeof value !== "object" || value === null) return false;
  const choice: Partial<Record<keyof z.infer<typeof StreamChoice>, unknown>> = value;
  return (
    isInt(choice.index) &&
    optionalString(choice.text) &&
    (nullish(choice.token_ids) || isIds(choice.token_ids, 0)) &&
    nullishString(choice.finish_reason) &&
    (nullish(choice.stop_reason) || isInt(choice.stop_reason) || typeof choice.stop_reason === "string")
  );
}

/**
 * The CompletionChunk schema checked by hand: it runs once per streamed token, where zod's
 * parse (which also copies the object) was a measurable share of the edge's CPU per token.
 * Accepts exactly what `CompletionChunk.safeParse` accepts (test/unit/vllm-protocol.test.ts);
 * the chunk is returned as parsed (unknown keys kept, not stripped).
 */
export function isCompletionChunk(value: unknown): value is CompletionChunk {
  if (typeof value !== "object" || value === null) return false;
  const chunk: Partial<Record<keyof CompletionChunk, unknown>> = value;
  if (!optionalString(chunk.id) || !optionalString(chunk.object) || !Array.isArray(chunk.choices) || !chunk.choices.every(isStreamChoice)) return false;
  if (!(nullish(chunk.prompt_token_ids) || isIds(chunk.prompt_token_ids))) return false;
  if (nullish(chunk.usage)) return true;
  if (typeof chunk.usage !== "object") return false;
  const usage: Partial<Record<"prompt_tokens" | "completion_tokens" | "prompt_tokens_details", unknown>> = chunk.usage;
  if (!isInt(usage.prompt_tokens) || !(usage.completion_tokens === undefined || isInt(usage.completion_tokens))) return false;
  if (nullish(usage.prompt_tokens_details)) return true;
  if (typeof usage.prompt_tokens_details !== "object") return false;
  const details: Partial<Record<"cached_tokens", unknown>> = usage.prompt_tokens_details;
  return nullish(details.cached_tokens) || (isInt(details.cached_tokens) && details.cached_tokens >= 0);
}

/** The prompt tokens the origin's prefix cache served, from its usage chunk (undefined: not reported). */
export function cachedTokensOf(chunk: CompletionChunk): number | undefined {
  return chunk.usage?.prompt_tokens_details?.cached_tokens ?? undefined;
}

/** vLLM's ErrorResponse: `{"error": {message, type, code}}` (newer) or flat `{object: "error", message, type, code}` (older). */
export const ErrorEvent = z.union([
  z.object({ error: z.object({ message: z.string(), type: z.string().optional(), code: z.union([z.number(), z.string()]).nullish() }) }),
  z.object({ object: z.literal("error"), message: z.string(), type: z.string().optional(), code: z.union([z.number(), z.string()]).nullish() }),
]);

/** The message of an error body or event, in either of vLLM's shapes. */
export function errorMessage(event: z.infer<typeof ErrorEvent>): string {
  return "error" in event ? event.error.message : event.message;
}
