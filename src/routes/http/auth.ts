// Bearer-key auth for the inference endpoints: keys from the API_KEYS secret, compared in
// constant time. With no key configured, only ALLOW_ANONYMOUS="true" (local dev) lets a
// request through; a deployed Worker missing its secret fails closed.
import { createMiddleware } from "hono/factory";
import { ServiceError } from "../../errors/service-error";

const encoder = new TextEncoder();

async function digest(value: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(value));
}

/** The configured keys' digests, computed once per isolate per API_KEYS value (not per request). */
// A per-isolate memo, listed with the others in src/isolate.ts.
let configured: { secret: string; digests: Promise<ArrayBuffer[]> } | undefined;

function keyDigests(secret: string): Promise<ArrayBuffer[]> {
  if (configured?.secret !== secret)
    configured = { secret, digests: Promise.all(parseApiKeys(secret).map(digest)) };
  return configured.digests;
}

/** Compares a presented key with every configured one without leaking which or how much matched. */
async function matchesAny(presented: string, digests: readonly ArrayBuffer[]): Promise<boolean> {
  const presentedDigest = await digest(presented);
  let matched = false;
  for (const keyDigest of digests) {
    // Equal-length digests make the comparison independent of the keys' lengths.
    matched = crypto.subtle.timingSafeEqual(presentedDigest, keyDigest) || matched;
  }
  return matched;
}

export function parseApiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
}

const challenge = { "www-authenticate": 'Bearer realm="edge-inference"' };

export const requireApiKey = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  const digests = await keyDigests(c.env.API_KEYS ?? "");
  if (digests.length === 0) {
    if (c.env.ALLOW_ANONYMOUS === "true") return next();
    throw new ServiceError(401, "unauthorized", "No API keys are configured for this service", {
      headers: challenge,
    });
  }
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match?.[1] === undefined) {
    throw new ServiceError(
      401,
      "unauthorized",
      "Send an API key as `Authorization: Bearer <key>`",
      {
        field: "headers.authorization",
        headers: challenge,
      },
    );
  }
  if (!(await matchesAny(match[1], digests))) {
    throw new ServiceError(401, "unauthorized", "The API key is not valid", {
      field: "headers.authorization",
      headers: challenge,
    });
  }
  return next();
});
