// vLLM's OpenAI-compatible /v1/completions as the edge speaks it to a generation origin: the
// request (the prompt as token ids, field names vLLM's own) and vLLM's error shapes. Its chunks:
// vllm-completion-chunk.ts; their logprobs: vllm-logprobs.ts.
import { z } from "zod";
import type { GenerationRequest } from "../generation/generation-request";

/**
 * The request body for one streamed generation.
 *
 * CompletionRequest's `return_token_ids`, `stop_token_ids`, `top_k`, `min_p`, the three penalties,
 * `logit_bias`, `allowed_token_ids`, `stream_options`, and `structured_outputs`.
 */
/**
 * The reference origin's extension for a generation continued on another replica:
 * `output_prefix_tokens: N` says the prompt's last N ids are output generated before, so its
 * structured output's automaton and its presence and frequency penalties read them as output.
 * The origin echoes N in this header; vLLM has no such field (it ignores it and answers
 * without the header), so a continuation that needs it is not taken from such a replica.
 */
export const OUTPUT_PREFIX_HEADER = "x-output-prefix-tokens";

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
    ...(request.outputPrefixTokens ? { output_prefix_tokens: request.outputPrefixTokens } : {}),
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
