// Managing keys: create and rotate (the secret is returned once, only its hash is stored), list,
// revoke. A change forgets this isolate's cached lookups of the key at once; other isolates see
// it within KEY_CACHE_TTL_MS.
import {
  type ApiKeyRecord,
  digestHex,
  type KeyLimits,
  newKeyId,
  newSecret,
  secretPrefix,
  sha256,
} from "./api-key";
import { keyCache } from "./authenticate";
import { keyStore } from "./key-store";
import type { Scope } from "./scopes";

export interface KeySpec {
  name: string;
  scopes: readonly Scope[];
  limits?: KeyLimits;
}

export interface IssuedKey {
  record: ApiKeyRecord;
  /** The key itself: shown once, never stored. */
  secret: string;
}

export function keyAdmin(db: D1Database, now: () => Date = () => new Date()) {
  const store = keyStore(db);
  return {
    list: () => store.list(),
    get: (id: string) => store.byId(id),
    async create(spec: KeySpec): Promise<IssuedKey> {
      const secret = newSecret();
      const record = await store.insert({
        id: newKeyId(),
        name: spec.name,
        hash: digestHex(await sha256(secret)),
        prefix: secretPrefix(secret),
        scopes: [...new Set(spec.scopes)],
        limits: spec.limits ?? {},
        createdAt: now().toISOString(),
      });
      return { record, secret };
    },
    /** A new secret for a live key (same id, scopes and limits); undefined if none is live. */
    async rotate(id: string): Promise<IssuedKey | undefined> {
      const secret = newSecret();
      const hash = digestHex(await sha256(secret));
      const record = await store.rotate(id, hash, secretPrefix(secret), now().toISOString());
      keyCache.forget(id);
      return record === undefined ? undefined : { record, secret };
    },
    async revoke(id: string): Promise<ApiKeyRecord | undefined> {
      const record = await store.revoke(id, now().toISOString());
      keyCache.forget(id);
      return record;
    },
  };
}
