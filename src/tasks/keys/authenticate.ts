// Who a request's Bearer key is: one of the API_KEYS secret's bootstrap keys (every scope, no
// limits), a stored key (looked up by hash through the isolate's cache), or, in local dev with
// no key configured, anonymous (every scope). Revoked and unknown keys are failures.
import { keep, memoMap, memoSlot } from "../../memos";
import { type ApiKeyRecord, digestHex, type KeyLimits, sha256 } from "./api-key";
import type { AuthFailureReason } from "./auth-failures";
import { createKeyCache } from "./key-cache";
import { keyStore } from "./key-store";
import { SCOPES, type Scope } from "./scopes";

export interface Principal {
  /** `key_…` for a stored key, `bootstrap-<n>` for the n-th API_KEYS key, or `anonymous`. */
  keyId: string;
  kind: "stored" | "bootstrap" | "anonymous";
  scopes: ReadonlySet<Scope>;
  limits: KeyLimits;
  /** A stored key's record (its last use is written from it). */
  record?: ApiKeyRecord;
}

/** Why a key was refused before any route's scope was looked at. */
export type KeyFailure = Extract<
  AuthFailureReason,
  "missing" | "unknown" | "revoked" | "not_configured"
>;

export type Authentication = { principal: Principal } | { failure: KeyFailure };

// The bootstrap keys' digests (per API_KEYS value) and the stored keys' lookups (KEY_CACHE_TTL_MS).
const bootstrap = memoSlot<{ secret: string; digests: Promise<ArrayBuffer[]> }>("keys.bootstrap");
export const keyCache = keep("keys.lookups", createKeyCache());

export function parseApiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
}

function bootstrapDigests(secret: string): Promise<ArrayBuffer[]> {
  if (bootstrap.value?.secret !== secret)
    bootstrap.value = { secret, digests: Promise.all(parseApiKeys(secret).map(sha256)) };
  return bootstrap.value.digests;
}

/** The index of the bootstrap key matching `digest`, compared in constant time with each. */
function bootstrapIndex(digest: ArrayBuffer, digests: readonly ArrayBuffer[]): number {
  let index = -1;
  digests.forEach((keyDigest, i) => {
    // Equal-length digests make the comparison independent of the keys' lengths.
    if (crypto.subtle.timingSafeEqual(digest, keyDigest) && index === -1) index = i;
  });
  return index;
}

const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

export interface AuthConfig {
  /** The API_KEYS secret. */
  bootstrapKeys: string | undefined;
  allowAnonymous: boolean;
  db: D1Database;
}

/** `presented`: the Bearer key, undefined when none was sent. */
export async function authenticate(
  presented: string | undefined,
  config: AuthConfig,
): Promise<Authentication> {
  const digests = await bootstrapDigests(config.bootstrapKeys ?? "");
  const anonymous = digests.length === 0 && config.allowAnonymous;
  if (presented === undefined) {
    if (anonymous) return { principal: anonymousPrincipal };
    return { failure: digests.length === 0 ? "not_configured" : "missing" };
  }
  const digest = await sha256(presented);
  const index = bootstrapIndex(digest, digests);
  if (index !== -1) {
    const principal: Principal = {
      keyId: `bootstrap-${index + 1}`,
      kind: "bootstrap",
      scopes: ALL_SCOPES,
      limits: {},
    };
    return { principal };
  }
  const hash = digestHex(digest);
  let record = keyCache.get(hash);
  if (record === "miss") {
    record = await keyStore(config.db).byHash(hash);
    keyCache.set(hash, record);
  }
  if (record === undefined || record.revokedAt !== null) {
    // Local dev without keys lets anything through, a stored key keeps its own rights.
    if (anonymous) return { principal: anonymousPrincipal };
    return { failure: record === undefined ? "unknown" : "revoked" };
  }
  return {
    principal: {
      keyId: record.id,
      kind: "stored",
      scopes: new Set(record.scopes),
      limits: record.limits,
      record,
    },
  };
}

const anonymousPrincipal: Principal = {
  keyId: "anonymous",
  kind: "anonymous",
  scopes: ALL_SCOPES,
  limits: {},
};

/** A stored key's last use is written at most once a minute per isolate (last_used_at). */
export const LAST_USED_RESOLUTION_MS = 60_000;
const touched = memoMap<string, number>("keys.last-used");

/** Writes the key's last use when this isolate has not in the last minute; else undefined. */
export function recordUse(
  db: D1Database,
  principal: Principal,
  now = Date.now(),
): Promise<void> | undefined {
  if (principal.kind !== "stored") return undefined;
  const last = touched.get(principal.keyId);
  if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return undefined;
  if (touched.size >= 4096) touched.clear();
  touched.set(principal.keyId, now);
  return keyStore(db).touch(principal.keyId, new Date(now).toISOString());
}
