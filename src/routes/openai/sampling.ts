// OpenAI/vLLM request fields → the task's generation options (defaults as vLLM's).
import { ServiceError } from "../../errors/service-error";
import type { GenerationOptions } from "../../tasks/text-generation/text-generation";
import type { samplingFields } from "./request-schemas";
import type { z } from "@hono/zod-openapi";

type SamplingFields = { [K in keyof typeof samplingFields]?: z.infer<(typeof samplingFields)[K]> };

/** `maxTokens` undefined: as many as the context leaves (OpenAI's and vLLM's chat default). */
export function generationOptions(body: SamplingFields, maxTokens: number | undefined): GenerationOptions {
  // As vLLM's SamplingParams._verify_args.
  if (body.min_tokens != null && maxTokens !== undefined && body.min_tokens > maxTokens) {
    throw new ServiceError(400, "invalid_request", `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${body.min_tokens}`, { field: "min_tokens" });
  }
  const stop = body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop;
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
      ...(body.logit_bias == null ? {} : { logitBias: Object.entries(body.logit_bias).map(([id, bias]) => [Number(id), bias] as const) }),
      ...(body.seed == null ? {} : { seed: body.seed }),
    },
    stop,
    minTokens: body.min_tokens ?? 0,
    ignoreEos: body.ignore_eos ?? false,
    stopTokenIds: body.stop_token_ids ?? [],
  };
}
