// OpenAI/vLLM request fields → the task's generation options (defaults as vLLM's).
import { ServiceError } from "../../errors/service-error";
import type { GenerationOptions } from "../../tasks/text-generation/text-generation";
import type { samplingFields } from "./sampling-fields";
import type { z } from "@hono/zod-openapi";
import { structuredOutputsOf } from "./structured-fields";

type SamplingFields = { [K in keyof typeof samplingFields]?: z.infer<(typeof samplingFields)[K]> };

/** `maxTokens` undefined: as many as the context leaves (OpenAI's and vLLM's chat default). */
export function generationOptions(
  body: SamplingFields,
  maxTokens: number | undefined,
): GenerationOptions {
  // As vLLM's SamplingParams._verify_args.
  if (body.min_tokens != null && maxTokens !== undefined && body.min_tokens > maxTokens) {
    throw new ServiceError(
      400,
      "invalid_request",
      `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${body.min_tokens}`,
      { field: "min_tokens" },
    );
  }
  const stop = body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop;
  const structured = structuredOutputsOf(body);
  return {
    maxTokens,
    sampling: {
      temperature: body.temperature ?? 1,
      topP: body.top_p ?? 1,
      topK: body.top_k == null || body.top_k < 0 ? 0 : body.top_k,
      minP: body.min_p ?? 0,
      presencePenalty: body.presence_penalty ?? 0,
      frequencyPenalty: body.frequency_penalty ?? 0,
      repetitionPenalty: body.repetition_penalty ?? 1,
      ...(body.logit_bias == null
        ? {}
        : {
            logitBias: Object.entries(body.logit_bias).map(
              ([id, bias]) => [Number(id), bias] as const,
            ),
          }),
      ...(body.allowed_token_ids == null ? {} : { allowedTokenIds: body.allowed_token_ids }),
      ...(body.seed == null ? {} : { seed: body.seed }),
    },
    stop,
    minTokens: body.min_tokens ?? 0,
    ignoreEos: body.ignore_eos ?? false,
    includeStopString: body.include_stop_str_in_output ?? false,
    stopTokenIds: body.stop_token_ids ?? [],
    ...(structured === undefined ? {} : { structured }),
  };
}

/**
 * The options of each of a request's `n` choices: with a seed, choice i is sampled with
 * seed + i, as vLLM seeds its child requests (vllm/v1/engine/parallel_sampling.py,
 * ParentRequest._get_child_sampling_params); without one, each choice draws its own.
 */
export function choiceOptions(options: GenerationOptions, n: number): GenerationOptions[] {
  const seed = options.sampling.seed;
  if (seed !== undefined && seed > Number.MAX_SAFE_INTEGER - (n - 1)) {
    throw new ServiceError(
      400,
      "invalid_request",
      `seed + n − 1 must be at most ${Number.MAX_SAFE_INTEGER} (choice i is sampled with seed + i)`,
      { field: "seed" },
    );
  }
  return Array.from({ length: n }, (_, index) =>
    seed === undefined || index === 0
      ? options
      : { ...options, sampling: { ...options.sampling, seed: seed + index } },
  );
}

/**
 * Chat's logprobs: how many alternatives (top_logprobs) when `logprobs` is true, else undefined.
 * top_logprobs without logprobs is a 400, as OpenAI's and vLLM's
 * (ChatCompletionRequest.check_logprobs).
 */
export function chatLogprobCount(body: {
  logprobs?: boolean | null;
  top_logprobs?: number | null;
}): number | undefined {
  if (!body.logprobs) {
    if ((body.top_logprobs ?? 0) > 0)
      throw new ServiceError(
        400,
        "invalid_request",
        "when using top_logprobs, logprobs must be set to true",
        { field: "top_logprobs" },
      );
    return undefined;
  }
  return body.top_logprobs ?? 0;
}
