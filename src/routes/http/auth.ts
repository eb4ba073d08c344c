// Bearer-key auth: `requireScope(scope)` for a route that needs exactly that right (403 naming
// the missing scope), `requireApiKey` for one that any valid key may call. Who the key is comes
// from tasks/keys (the API_KEYS bootstrap keys, stored keys, anonymous in local dev).
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ServiceError } from "../../errors/service-error";
import { type AuthFailureReason, countAuthFailure } from "../../tasks/keys/auth-failures";
import { authenticate, type Principal, recordUse } from "../../tasks/keys/authenticate";
import type { Scope } from "../../tasks/keys/scopes";
import type { AppEnv } from "./services";
import { waitUntil } from "./wait-until";

export { parseApiKeys } from "../../tasks/keys/authenticate";

type AuthEnv = { Bindings: Env; Variables: { principal: Principal } };

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

/** The request's principal, authenticated once per request (a later middleware reuses it). */
async function principalOf<E extends AuthEnv>(c: Context<E>): Promise<Principal> {
  const known = c.get("principal");
  if (known !== undefined) return known;
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
  return result.principal;
}

/** Any valid key (bootstrap, stored with any scope, anonymous in local dev). */
export const requireApiKey = createMiddleware<AuthEnv>(async (c, next) => {
  await principalOf(c);
  return next();
});

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

/** A valid key holding `scope`. */
export function requireScope(scope: Scope) {
  return createMiddleware<AuthEnv>(async (c, next) => {
    authorize(await principalOf(c), scope);
    return next();
  });
}

/** A valid key holding the scope `scopeOf` picks for this request (e.g. from the model). */
export function requireScopeBy(scopeOf: (c: Context<AppEnv>) => Scope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    authorize(await principalOf(c), scopeOf(c));
    return next();
  });
}
