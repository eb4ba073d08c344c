// The decoder's limits (rows, queue, prefill budget, prefix cache) and the 429 of a full queue.
import { ServiceError } from "../../../src/errors/service-error";

export interface DecoderLimits {
  maxBatch: number;
  maxWaiting: number;
  prefillTokensPerStep: number;
  /** Most bytes of keys/values kept for automatic prefix caching (0: none kept). */
  prefixCacheBytes: number;
  /** Keep every prompt's blocks (vLLM's way), not only those whose first block was seen before. */
  prefixCacheAdmitAll?: boolean;
  /**
   * Fault injection: µs each prompt token a prefill computes holds the engine longer, as a
   * larger model's prefill would (benchmarks of what sits in front of the origin; 0: none).
   */
  prefillUsPerToken?: number;
}

/** The 429 of a full queue (every row and queue place taken), with Retry-After. */
export function atCapacity({ maxBatch, maxWaiting }: DecoderLimits): ServiceError {
  return new ServiceError(
    429,
    "invalid_request",
    `The origin is at capacity (${maxBatch} running, ${maxWaiting} waiting); retry shortly`,
    { headers: { "retry-after": "1" } },
  );
}
