// Bearer-key auth: `requireScope(scope)` for a route that needs exactly that right (403 naming
// the missing scope), `requireApiKey` for one that any valid key may call. Who the key is comes
// from tasks/keys (the API_KEYS bootstrap keys, stored keys, anonymous in local dev).
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { toServiceError } from "../../errors/problem";
import { ServiceError } from "../../errors/service-error";
import { type AuthFailureReason, countAuthFailure } from "../../tasks/keys/auth-failures";
import { authenticate, type Principal, recordUse } from "../../tasks/keys/authenticate";
import type { LimitSnapshot } from "../../tasks/keys/limit-windows";
import type { Scope } from "../../tasks/keys/scopes";
import { auditRequest, type RequestUsage } from "./audit";
import { countDeferred, type DeferredCount, limitHeaders, limitRequest } from "./limits";
import type { AppEnv } from "./services";
import { waitUntil } from "./wait-until";

export { parseApiKeys } from "../../tasks/keys/authenticate";

type AuthEnv = {
  Bindings: Env;
  Variables: {
    principal: Principal;
    limits: LimitSnapshot;
    usage: RequestUsage;
    requestCount: DeferredCount;
  };
};

const challenge = { "www-authenticate": 'Bearer realm="edge-inference"' };

const DETAILS: Record<Exclude<AuthFailureReason, "insufficient_scope">, string> = {
  missing: "Send an API key as `Authorization: Bearer <key>`",
  malformed: "Send an API key as `Authorization: Bearer <key>`",
  unknown: "The API key is not valid",
  revoked: "The API key is not valid",
  not_configured: "No API keys are configured for this service, and none was sent",
};

function refuse(reason: Exclude<AuthFailureReason, "insufficient_scope">): never {
  countAuthFailure(reason);
  throw new ServiceError(401, "unauthorized", DETAILS[reason], {
    ...(reason === "not_configured" ? {} : { field: "headers.authorization" }),
    headers: challenge,
  });
}

/**
 * The request's principal, authenticated once per request (a later middleware reuses it).
 * `first`: this call authenticated it.
 */
async function principalOf<E extends AuthEnv>(
  c: Context<E>,
): Promise<{ principal: Principal; first: boolean }> {
  const known = c.get("principal");
  if (known !== undefined) return { principal: known, first: false };
  const header = c.req.header("authorization");
  const match = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (header !== undefined && match?.[1] === undefined) refuse("malformed");
  const result = await authenticate(match?.[1], {
    bootstrapKeys: c.env.API_KEYS,
    allowAnonymous: c.env.ALLOW_ANONYMOUS === "true",
    db: c.env.DB,
  });
  if ("failure" in result) return refuse(result.failure);
  c.set("principal", result.principal);
  const used = recordUse(c.env.DB, result.principal);
  if (used !== undefined) waitUntil(c, used, "key_last_used");
  return { principal: result.principal, first: true };
}

/**
 * Authenticates the request, counts it against its key's rate, checks its scope, runs the route;
 * then the x-ratelimit-* headers and the audit row. A later guard of the same request (a
 * sub-app's second middleware) only checks its scope.
 */
async function guard<E extends AuthEnv>(
  c: Context<E>,
  next: () => Promise<void>,
  scopeOf?: (c: Context<E>) => Scope,
  reservesTokens = false,
): Promise<void> {
  const startedAt = Date.now();
  const { principal, first } = await principalOf(c);
  if (!first) {
    if (scopeOf !== undefined) authorize(principal, scopeOf(c));
    return next();
  }
  try {
    await limitRequest(c, principal, reservesTokens);
    if (scopeOf !== undefined) authorize(principal, scopeOf(c));
    await next();
    await countDeferred(c, principal);
  } catch (error) {
    await countDeferred(c, principal);
    // Refused here (429, 403): the error is rendered after this, with the limits' headers.
    const refusal = toServiceError(error);
    const withHeaders = new ServiceError(refusal.status, refusal.code, refusal.message, {
      ...(refusal.field === undefined ? {} : { field: refusal.field }),
      cause: refusal.cause,
      headers: { ...limitHeaders(c), ...refusal.headers },
    });
    auditRequest(c, principal, startedAt, refusal.status);
    throw withHeaders;
  }
  for (const [name, value] of Object.entries(limitHeaders(c))) c.res.headers.set(name, value);
  auditRequest(c, principal, startedAt, c.res.status);
}

/** Any valid key (bootstrap, stored with any scope, anonymous in local dev). */
export const requireApiKey = createMiddleware<AuthEnv>((c, next) => guard(c, next));

/** 403 `insufficient_scope` naming `scope` unless the request's key holds it. */
export function authorize(principal: Principal, scope: Scope): void {
  if (principal.scopes.has(scope)) return;
  countAuthFailure("insufficient_scope");
  throw new ServiceError(
    403,
    "insufficient_scope",
    `This API key lacks the scope "${scope}" that this route requires`,
    {
      field: "headers.authorization",
      headers: {
        "www-authenticate": `Bearer realm="edge-inference", error="insufficient_scope", scope="${scope}"`,
      },
    },
  );
}

/**
 * A valid key holding `scope`. `reservesTokens`: every answer of the route's is a generation
 * that reserves tokens first (meteredFor), so a limited key's request is counted in its first
 * reservation, one call to the key's Durable Object instead of two.
 */
export function requireScope(scope: Scope, options: { reservesTokens?: boolean } = {}) {
  return createMiddleware<AuthEnv>((c, next) =>
    guard(c, next, () => scope, options.reservesTokens ?? false),
  );
}

/** A valid key holding the scope `scopeOf` picks for this request (e.g. from the model). */
export function requireScopeBy(scopeOf: (c: Context<AppEnv>) => Scope) {
  return createMiddleware<AppEnv>((c, next) => guard(c, next, scopeOf));
}
