// Streaming calls over a pool's replicas, before their first output: a replica that refuses
// (429, 503), fails or times out hands the call to the next at once; once each has had its
// turn, the single origin's retries apply. With one replica, exactly the single origin's rules.
import { ServiceError } from "../../errors/service-error";
import type { CircuitBreaker } from "./circuit-breaker";
import type { Replica } from "./pool-config";
import type { Fleet } from "./replica-pool";

export const RETRY_DELAYS_MS = [100, 400];

/** A failure worth another attempt: the origin failed or did not answer in time. */
export const retryable = (error: unknown) =>
  error instanceof ServiceError &&
  (error.code === "upstream_error" || error.code === "upstream_timeout");

/** A refusal that says the replica will not take work now (draining, full, circuit open). */
export const refused = (error: unknown): error is ServiceError =>
  error instanceof ServiceError &&
  (error.code === "upstream_unavailable" || error.code === "rate_limited");

const retryAfterOf = (error: ServiceError) => Number(error.headers?.["retry-after"] ?? "1") || 1;

/** Tells the fleet what a replica's refusal says about it (busy, or draining). */
export function noteRefusal(
  fleet: Fleet,
  url: string,
  breaker: CircuitBreaker,
  error: ServiceError,
) {
  if (error.code === "rate_limited") fleet.busy(url);
  else if (breaker.available()) fleet.draining(url, retryAfterOf(error));
}

export interface FailoverOptions<T> {
  fleet: Fleet;
  pool: readonly Replica[];
  /** The prompt's ids, for affinity; undefined: the least loaded first. */
  promptIds?: readonly number[];
  /** What answers 200 on a ready replica (vLLM: /health, OIP: /v2/health/ready). */
  probePath: string;
  /** Attempts on one replica (1 = no retry). */
  attempts: number;
  signal: AbortSignal;
  /** One call to one replica; it tells the breaker of failures itself. */
  call(url: string, breaker: CircuitBreaker): AsyncIterable<T>;
}

/** The items of the first call that yields any; after one is yielded, a failure is thrown. */
export async function* failover<T>(options: FailoverOptions<T>): AsyncGenerator<T> {
  const { fleet, signal } = options;
  const order = fleet.choose(options.pool, options.promptIds, options.probePath);
  const alone = order.length === 1;
  const given = new Set<string>();
  let lastError: unknown;
  let yielded = false;
  const tries = Math.max(options.attempts, order.length);
  for (let attempt = 0, retry = 0; attempt < tries; attempt += 1) {
    const url = order.find((candidate) => !given.has(candidate)) ?? order[attempt % order.length]!;
    const again = given.has(url);
    if (again) {
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[retry] ?? 1000));
      retry += 1;
    }
    given.add(url);
    signal.throwIfAborted();
    const lease = fleet.lease(url);
    try {
      // A replica is checked when this call first turns to it; its retries are not.
      if (!again) lease.breaker.check();
      for await (const item of options.call(url, lease.breaker)) {
        yielded = true;
        yield item;
      }
      return;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (yielded) throw error;
      if (refused(error) && !alone) noteRefusal(fleet, url, lease.breaker, error);
      else if (!retryable(error)) throw error;
      lastError = error;
    } finally {
      lease.release();
    }
  }
  throw lastError;
}
