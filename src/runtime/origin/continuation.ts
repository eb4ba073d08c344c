// A generation that lost its replica mid-stream, continued on another: the prompt plus the ids
// already generated become the new prompt (those ids marked as output so far), and what is left
// of the budget the new maximum.

import { ServiceError } from "../../errors/service-error";
import type { GenerationRequest } from "../runtime";

/**
 * A replica answered a continuation that needs `output_prefix_tokens` without echoing it (vLLM):
 * it would restart the structured output or the penalties, so none of its tokens is used. Not
 * the replica's failure (its breaker is not told), and not retried.
 */
export class CannotContinue extends ServiceError {
  constructor() {
    super(
      502,
      "upstream_error",
      "The replica cannot continue this generation where it stopped: a structured output or " +
        "presence and frequency penalties need output_prefix_tokens, which it does not take",
    );
  }
}

/**
 * Whether a continuation of `request` must be taken by a replica that reads its earlier output as
 * output (the reference origin's `output_prefix_tokens`, echoed in its answer's headers): a
 * structured output (its automaton starts where the output so far leaves it) and presence or
 * frequency penalties (vLLM counts them over the output ids). vLLM ignores the field, so such a
 * continuation is not taken from it; any other continues anywhere. Greedy decoding continues byte
 * for byte; a seeded sampler continues validly but not as the uninterrupted run would have (its
 * random stream starts again from the seed).
 */
export function needsOutputPrefix(request: GenerationRequest): boolean {
  const { sampling } = request;
  return (
    (request.outputPrefixTokens ?? 0) > 0 &&
    (request.structured !== undefined ||
      (sampling.presencePenalty ?? 0) !== 0 ||
      (sampling.frequencyPenalty ?? 0) !== 0)
  );
}

/** The request that continues `request` after `generated` ids (none of them a stop id). */
export function continuation(
  request: GenerationRequest,
  generated: readonly number[],
): GenerationRequest {
  const { promptLogprobs: _sent, ...rest } = request;
  return {
    ...rest,
    promptIds: [...request.promptIds, ...generated],
    outputPrefixTokens: (request.outputPrefixTokens ?? 0) + generated.length,
    maxTokens: request.maxTokens - generated.length,
    ...(request.minTokens ? { minTokens: Math.max(0, request.minTokens - generated.length) } : {}),
  };
}
