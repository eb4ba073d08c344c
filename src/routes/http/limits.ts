// A key's limits at the edge: its request rate checked with authentication, its token budget
// reserved per generation (tasks/keys/metered-generator.ts), both in the key's Durable Object;
// OpenAI's x-ratelimit-* headers on every answer to a limited key, 429 with Retry-After over one.
import type { Context } from "hono";
import { ServiceError } from "../../errors/service-error";
import type { Principal } from "../../tasks/keys/authenticate";
import { keyLimiter } from "../../tasks/keys/key-limiter";
import type { Admission, LimitSnapshot } from "../../tasks/keys/limit-windows";
import { meteredGenerator } from "../../tasks/keys/metered-generator";
import { admitCarrying, sendWaiting, settleEnded } from "../../tasks/keys/settlements";
import type { TextGenerator, Usage } from "../../tasks/text-generation/text-generation";
import { type RequestUsage, requestUsage } from "./audit";
import { waitUntil } from "./wait-until";

/** A request whose count waits for its first token reservation (one object call, not two). */
export interface DeferredCount {
  deferred: boolean;
}

type LimitsEnv = {
  Bindings: Env;
  Variables: {
    principal: Principal;
    limits: LimitSnapshot;
    usage: RequestUsage;
    requestCount: DeferredCount;
  };
};

const hasLimits = (principal: Principal) => Object.keys(principal.limits).length > 0;

/** OpenAI's reset durations: "20ms", "1s", "6m0s", "1h2m3s". */
export function resetDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  const [hours, minutes, seconds] = [
    Math.floor(total / 3600),
    Math.floor(total / 60) % 60,
    total % 60,
  ];
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

export function rateLimitHeaders(snapshot: LimitSnapshot): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const kind of ["requests", "tokens"] as const) {
    const window = snapshot[kind];
    if (window === undefined) continue;
    headers[`x-ratelimit-limit-${kind}`] = String(window.limit);
    headers[`x-ratelimit-remaining-${kind}`] = String(window.remaining);
    headers[`x-ratelimit-reset-${kind}`] = resetDuration(window.resetMs);
  }
  return headers;
}

function refusal(admission: Extract<Admission, { admitted: false }>): ServiceError {
  const detail = admission.tooLarge
    ? `This request needs more tokens than the key's ${admission.limit} allows; ` +
      "lower max_tokens or the prompt"
    : `The key's ${admission.limit} is spent until its window resets`;
  return new ServiceError(429, "rate_limited", detail, {
    field: admission.limit.startsWith("tokens") ? "max_tokens" : "headers.authorization",
    headers: {
      "retry-after": String(Math.max(1, Math.ceil(admission.retryAfterMs / 1000))),
      ...rateLimitHeaders(admission.snapshot),
    },
  });
}

/**
 * Counts the request against its key's rate (when the key has limits); throws the 429. With
 * `deferred`, a route that reserves tokens for its generations counts it in the first
 * reservation instead (meteredFor), and countDeferred counts it if none was made.
 */
export async function limitRequest<E extends LimitsEnv>(
  c: Context<E>,
  principal: Principal,
  deferred = false,
): Promise<void> {
  if (!hasLimits(principal)) return;
  if (deferred) {
    c.set("requestCount", { deferred: true });
    return;
  }
  const admission = await keyLimiter(c.env.KEY_LIMITS, principal.keyId).admit({
    id: crypto.randomUUID(),
    requests: 1,
    tokens: 0,
    limits: principal.limits,
  });
  if (!admission.admitted) throw refusal(admission);
  c.set("limits", admission.snapshot);
}

/**
 * After a route that was to count its request in a reservation but made none (refused before
 * generating: a 400, an unknown model): counts it now, so refusals still spend the rate.
 */
export async function countDeferred<E extends LimitsEnv>(
  c: Context<E>,
  principal: Principal,
): Promise<void> {
  const count: DeferredCount | undefined = c.get("requestCount");
  if (count === undefined || !count.deferred) return;
  count.deferred = false;
  try {
    const admission = await keyLimiter(c.env.KEY_LIMITS, principal.keyId).admit({
      id: crypto.randomUUID(),
      requests: 1,
      tokens: 0,
      limits: principal.limits,
    });
    c.set("limits", admission.snapshot);
  } catch (error) {
    // The answer is already made: a count that failed is logged, not turned into an error.
    console.error(JSON.stringify({ event: "request_count_failed", error: String(error) }));
  }
}

/** The headers of the key's latest count (none for a key without limits). */
export function limitHeaders<E extends LimitsEnv>(c: Context<E>): Record<string, string> {
  const snapshot = c.get("limits");
  return snapshot === undefined ? {} : rateLimitHeaders(snapshot);
}

/**
 * The request's generator: its usage counted for the audit trail, and charged to its key's
 * token budget when the key has one.
 */
export function meteredFor<E extends LimitsEnv>(c: Context<E>, generator: TextGenerator) {
  const principal = c.get("principal");
  const { limits } = principal;
  const budgeted =
    limits.tokens_per_minute !== undefined ||
    limits.tokens_per_day !== undefined ||
    limits.tokens_per_month !== undefined;
  const limiter = hasLimits(principal) ? keyLimiter(c.env.KEY_LIMITS, principal.keyId) : undefined;
  const count: DeferredCount | undefined = c.get("requestCount");
  const usage = requestUsage(c);
  usage.model = generator.manifest.name;
  // Each generation's end is awaited by waitUntil from the moment it reserves: a client that
  // leaves ends the request, and without it the isolate would drop the generation (and its
  // settlement) instead of seeing the abort through to the finally that settles it. Its
  // settlement may then wait for the key's next reservation in this isolate (settlements.ts).
  const pending = new Map<string, (used: Usage | undefined) => void>();
  const keyId = principal.keyId;
  return meteredGenerator(
    generator,
    {
      async reserve(tokens) {
        const id = crypto.randomUUID();
        // The request's own count rides on its first reservation when the route deferred it.
        const requests = count?.deferred === true ? 1 : 0;
        if (count !== undefined) count.deferred = false;
        const reserved = budgeted ? tokens : 0;
        if (limiter !== undefined && (requests > 0 || reserved > 0)) {
          let admission: Admission;
          try {
            admission = await admitCarrying(limiter, keyId, {
              id,
              requests,
              tokens: reserved,
              limits,
            });
          } catch (error) {
            waitUntil(c, sendWaiting(limiter, keyId, limits), "budget_settle");
            throw error;
          }
          if (!admission.admitted) throw refusal(admission);
          c.set("limits", admission.snapshot);
        }
        const ended = new Promise<Usage | undefined>((resolve) => pending.set(id, resolve)).then(
          (used) => {
            usage.promptTokens += used?.prompt_tokens ?? 0;
            usage.completionTokens += used?.completion_tokens ?? 0;
            return used?.total_tokens ?? 0;
          },
        );
        usage.settled.push(ended);
        const charged = budgeted && limiter !== undefined;
        waitUntil(
          c,
          charged ? ended.then((used) => settleEnded(limiter, keyId, limits, { id, used })) : ended,
          "budget_settle",
        );
        return id;
      },
      settle(id, used) {
        pending.get(id)?.(used);
        pending.delete(id);
      },
    },
    principal.keyId,
  );
}
