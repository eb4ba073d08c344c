// The audit side of an authenticated request: what its generations used (their usage, gathered
// as each settles) and, once the answer is out and every generation has ended, its audit row
// written off the request's path (waitUntil).
import type { Context } from "hono";
import { routePath } from "hono/route";
import { recordAudit } from "../../tasks/keys/audit";
import type { Principal } from "../../tasks/keys/authenticate";
import { waitUntil } from "./wait-until";

export interface RequestUsage {
  model: string | undefined;
  promptTokens: number;
  completionTokens: number;
  /** One per generation: resolves when it has ended and its usage is counted. */
  settled: Promise<unknown>[];
}

type UsageEnv = { Bindings: Env; Variables: { usage: RequestUsage } };

/** The request's usage record, made on first use. */
export function requestUsage<E extends UsageEnv>(c: Context<E>): RequestUsage {
  let usage = c.get("usage");
  if (usage === undefined) {
    usage = { model: undefined, promptTokens: 0, completionTokens: 0, settled: [] };
    c.set("usage", usage);
  }
  return usage;
}

/** The model a request names in its path (/v1/run/{model}, /v2/models/{name}), if any. */
function modelInPath(c: Context): string | undefined {
  return c.req.param("model") ?? c.req.param("name");
}

/** Schedules the request's audit row, once its status is known. */
export function auditRequest<E extends UsageEnv>(
  c: Context<E>,
  principal: Principal,
  startedAt: number,
  status: number,
): void {
  const latencyMs = Date.now() - startedAt;
  const usage = requestUsage(c);
  const entry = {
    keyId: principal.keyId,
    at: startedAt,
    method: c.req.method,
    route: routePath(c, -1),
    status,
    latencyMs,
  };
  const model = usage.model ?? modelInPath(c);
  waitUntil(
    c,
    Promise.allSettled(usage.settled).then(() =>
      recordAudit(c.env.DB, {
        ...entry,
        model: usage.model ?? model,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
      }),
    ),
    "audit",
  );
}
