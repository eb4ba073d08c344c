// A generation that lost its replica mid-stream, continued on another: the prompt plus the ids
// already generated become the new prompt, and what is left of the budget the new maximum.

import type { GenerationRequest } from "../runtime";

/**
 * Whether a generation can go on from its ids on another replica without changing what it means:
 * not under a structured output (the origin's automaton cannot start mid-output) nor presence or
 * frequency penalties (vLLM counts them over the output ids alone, which would move into the
 * prompt). Greedy decoding continues byte for byte; a seeded sampler continues validly but not as
 * the uninterrupted run would have (its random stream starts again from the seed).
 */
export function continuable(request: GenerationRequest): boolean {
  const { sampling } = request;
  return (
    request.structured === undefined &&
    (sampling.presencePenalty ?? 0) === 0 &&
    (sampling.frequencyPenalty ?? 0) === 0
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
    maxTokens: request.maxTokens - generated.length,
    ...(request.minTokens ? { minTokens: Math.max(0, request.minTokens - generated.length) } : {}),
  };
}
