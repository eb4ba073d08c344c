// The isolate's key lookups: trusted for exactly the TTL (the revocation bound), bounded in
// entries (unknown keys included), and forgotten at once for a key changed in this isolate.
import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../../../../src/tasks/keys/api-key";
import { createKeyCache } from "../../../../src/tasks/keys/key-cache";

const record = (id: string): ApiKeyRecord => ({
  id,
  name: id,
  prefix: "ei_abcdef",
  scopes: ["generate"],
  limits: {},
  createdAt: "2026-11-27T00:00:00.000Z",
  rotatedAt: null,
  lastUsedAt: null,
  revokedAt: null,
});

describe("createKeyCache", () => {
  it("trusts a lookup for the TTL and not a millisecond longer", () => {
    let now = 0;
    const cache = createKeyCache({ ttlMs: 10_000, now: () => now });
    cache.set("h1", record("key_1"));
    cache.set("h2", undefined);
    now = 9_999;
    expect(cache.get("h1")).toMatchObject({ id: "key_1" });
    expect(cache.get("h2")).toBeUndefined();
    now = 10_000;
    expect(cache.get("h1")).toBe("miss");
    expect(cache.get("h2")).toBe("miss");
  });

  it("keeps at most its capacity, dropping the oldest", () => {
    const cache = createKeyCache({ entries: 3, now: () => 0 });
    for (const hash of ["a", "b", "c", "d"]) cache.set(hash, undefined);
    expect(cache.size).toBe(3);
    expect(cache.get("a")).toBe("miss");
    expect(cache.get("d")).toBeUndefined();
  });

  it("forgets every lookup of a key at once", () => {
    const cache = createKeyCache({ now: () => 0 });
    cache.set("old", record("key_1"));
    cache.set("other", record("key_2"));
    cache.forget("key_1");
    expect(cache.get("old")).toBe("miss");
    expect(cache.get("other")).toMatchObject({ id: "key_2" });
  });
});
