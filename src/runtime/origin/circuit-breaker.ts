// A circuit breaker per origin URL: after `threshold` consecutive failures (unreachable,
// 5xx other than an overload answer, timeouts) calls fail fast with 503 for `cooldownMs`;
// then one probe is let through, and its outcome closes or reopens the circuit.
import { ServiceError } from "../../errors/service-error";

export interface CircuitBreaker {
  /** Throws 503 while open; lets one probe through once the cooldown is over. */
  check(): void;
  /** True when check() would pass (closed, or its cooldown over and no probe out); no change. */
  available(): boolean;
  success(): void;
  failure(): void;
  state(): "closed" | "open" | "half-open";
}

export interface BreakerOptions {
  threshold: number;
  cooldownMs: number;
  now?: () => number;
}

export function circuitBreaker({
  threshold,
  cooldownMs,
  now = Date.now,
}: BreakerOptions): CircuitBreaker {
  let failures = 0;
  let openedAt: number | undefined;
  let probing = false;
  return {
    check() {
      if (openedAt === undefined) return;
      const waited = now() - openedAt;
      if (waited < cooldownMs || probing) {
        const retryAfter = Math.max(1, Math.ceil((cooldownMs - waited) / 1000));
        throw new ServiceError(
          503,
          "upstream_unavailable",
          "The GPU origin is failing; requests are refused until it recovers",
          {
            headers: { "retry-after": String(retryAfter) },
          },
        );
      }
      probing = true;
    },
    available: () => openedAt === undefined || (now() - openedAt >= cooldownMs && !probing),
    success() {
      failures = 0;
      openedAt = undefined;
      probing = false;
    },
    failure() {
      failures += 1;
      probing = false;
      if (failures >= threshold || openedAt !== undefined) openedAt = now();
    },
    state: () => (openedAt === undefined ? "closed" : probing ? "half-open" : "open"),
  };
}

/** One breaker per origin URL, shared by every model it serves. */
export type Breakers = (url: string) => CircuitBreaker;

/**
 * A table of breakers by origin URL, each built at its URL's first call (the memo
 * "origin.breakers" keeps the Worker's).
 */
export function createBreakers(): Breakers {
  const breakers = new Map<string, CircuitBreaker>();
  return (url) => {
    let breaker = breakers.get(url);
    if (breaker === undefined) {
      breaker = circuitBreaker({ threshold: 5, cooldownMs: 5_000 });
      breakers.set(url, breaker);
    }
    return breaker;
  };
}
