// The isolate's cache of key lookups, by hash: a key revoked or rotated elsewhere stops working
// here within `ttlMs` (KEY_CACHE_TTL_MS, 10 s); in this isolate, at once. Bounded in entries.
import type { ApiKeyRecord } from "./api-key";

/** How long a lookup (found or not) is trusted: the bound on a revocation reaching an isolate. */
export const KEY_CACHE_TTL_MS = 10_000;
/** Entries kept at most (unknown keys included, so a flood of random keys cannot grow it). */
export const KEY_CACHE_ENTRIES = 4096;

interface Entry {
  /** Undefined: no such key (cached too, so unknown keys do not each cost a D1 read). */
  record: ApiKeyRecord | undefined;
  expiresAt: number;
}

export function createKeyCache(
  options: { ttlMs?: number; entries?: number; now?: () => number } = {},
) {
  const ttlMs = options.ttlMs ?? KEY_CACHE_TTL_MS;
  const capacity = options.entries ?? KEY_CACHE_ENTRIES;
  const now = options.now ?? (() => Date.now());
  const entries = new Map<string, Entry>();
  return {
    /** The cached lookup of `hash`, or "miss" when there is none or it is older than the TTL. */
    get(hash: string): ApiKeyRecord | undefined | "miss" {
      const entry = entries.get(hash);
      if (entry === undefined) return "miss";
      if (entry.expiresAt <= now()) {
        entries.delete(hash);
        return "miss";
      }
      return entry.record;
    },
    set(hash: string, record: ApiKeyRecord | undefined): void {
      entries.delete(hash);
      // Oldest first: a Map iterates in insertion order.
      while (entries.size >= capacity) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
      entries.set(hash, { record, expiresAt: now() + ttlMs });
    },
    /** Forgets the lookups of key `id` (revoked or rotated in this isolate). */
    forget(id: string): void {
      for (const [hash, entry] of entries) if (entry.record?.id === id) entries.delete(hash);
    },
    get size(): number {
      return entries.size;
    },
  };
}

export type KeyCache = ReturnType<typeof createKeyCache>;
