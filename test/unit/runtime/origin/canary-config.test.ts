// Two versions side by side (src/runtime/origin/canary-config.ts): ORIGIN_CANARY checked against
// the pool with each mistake named, the split by weight over sticky keys, and the replica order.
import { describe, expect, it } from "vitest";
import {
  type CanaryConfig,
  parseCanary,
  splitVersion,
  stickyHash,
  versionOrder,
} from "../../../../src/runtime/origin/canary-config";
import type { Replica } from "../../../../src/runtime/origin/pool-config";

const pool: Replica[] = [
  { url: "http://a", weight: 1, version: "v1" },
  { url: "http://b", weight: 1, version: "v1" },
  { url: "http://c", weight: 1, version: "v2" },
];

const config = (fields: object) =>
  parseCanary("ORIGIN_CANARY", JSON.stringify({ stable: "v1", canary: "v2", ...fields }), pool);

const canaryOf = (fields: object): CanaryConfig => {
  const parsed = config(fields);
  if ("error" in parsed) throw new Error(parsed.error);
  return parsed.canary;
};

describe("ORIGIN_CANARY", () => {
  it("fills the thresholds' defaults", () => {
    expect(canaryOf({ weight: 10 })).toEqual({
      stable: "v1",
      canary: "v2",
      weight: 10,
      maxErrorRate: 0.05,
      maxLatencyMs: 10_000,
      sticky: "conversation",
      windowSeconds: 60,
      minRequests: 20,
    });
  });

  it("names each mistake", () => {
    expect(parseCanary("ORIGIN_CANARY", "{", pool)).toEqual({
      error: 'ORIGIN_CANARY is not JSON (an object with "stable", "canary" and "weight")',
    });
    expect(config({ weight: 101 })).toMatchObject({ error: /^ORIGIN_CANARY\.weight: / });
    expect(config({ weight: 5, maxErrorRate: 2 })).toMatchObject({
      error: /^ORIGIN_CANARY\.maxErrorRate: /,
    });
    expect(config({ weight: 5, sticky: "ip" })).toMatchObject({
      error: /^ORIGIN_CANARY\.sticky: /,
    });
    expect(config({ weight: 5, extra: 1 })).toMatchObject({ error: /^ORIGIN_CANARY: / });
    expect(config({ weight: 5, canary: "v3" })).toEqual({
      error: 'ORIGIN_CANARY.canary: no replica of the pool has version "v3"',
    });
    expect(config({ weight: 5, canary: "v1" })).toEqual({
      error: 'ORIGIN_CANARY: "stable" and "canary" name the same version',
    });
  });
});

describe("the split", () => {
  const prompts = Array.from({ length: 2_000 }, (_, i) => [1, 2, i, i * 7, 3]);

  it("sends about `weight` percent of conversations to the canary", () => {
    const canary = canaryOf({ weight: 20 });
    const toCanary = prompts.filter(
      (ids) => splitVersion(stickyHash(canary, { promptIds: ids }), canary) === "v2",
    ).length;
    expect(toCanary / prompts.length).toBeGreaterThan(0.17);
    expect(toCanary / prompts.length).toBeLessThan(0.23);
    expect(
      prompts.every(
        (ids) =>
          splitVersion(
            stickyHash(canary, { keyId: "k", promptIds: ids }),
            canaryOf({ weight: 0 }),
          ) === "v1",
      ),
    ).toBe(true);
    expect(
      prompts.every(
        (ids) =>
          splitVersion(
            stickyHash(canary, { keyId: "k", promptIds: ids }),
            canaryOf({ weight: 100 }),
          ) === "v2",
      ),
    ).toBe(true);
  });

  it("keeps a conversation on its version as it grows past its first 64 ids", () => {
    const canary = canaryOf({ weight: 50 });
    const first = Array.from({ length: 70 }, (_, i) => i);
    const later = [...first, 900, 901, 902];
    expect(stickyHash(canary, { promptIds: later })).toBe(stickyHash(canary, { promptIds: first }));
    expect(stickyHash(canary, { promptIds: [1, 2] })).not.toBe(
      stickyHash(canary, { promptIds: [2, 1] }),
    );
  });

  it("keeps a chat on its version by its conversation, whatever its prompt has grown to", () => {
    const canary = canaryOf({ weight: 50 });
    const conversationKey = '[{"role":"user","content":"hello"}]';
    expect(stickyHash(canary, { conversationKey, promptIds: [1, 2, 3] })).toBe(
      stickyHash(canary, { conversationKey, promptIds: [9, 9, 9, 9] }),
    );
  });

  it("is sticky by API key when configured so, whatever the prompt", () => {
    const byKey = canaryOf({ weight: 50, sticky: "key" });
    const keys = Array.from({ length: 400 }, (_, i) => `key-${i}`);
    const versions = keys.map((key) =>
      prompts
        .slice(0, 20)
        .map((ids) =>
          splitVersion(
            stickyHash(byKey, { keyId: key, conversationKey: String(ids), promptIds: ids }),
            byKey,
          ),
        ),
    );
    expect(versions.every((each) => new Set(each).size === 1)).toBe(true);
    const toCanary = versions.filter((each) => each[0] === "v2").length;
    expect(toCanary).toBeGreaterThan(150);
    expect(toCanary).toBeLessThan(250);
  });
});

describe("the replica order", () => {
  const canary = canaryOf({ weight: 10 });
  const ranked = ["http://c", "http://b", "http://a"];

  it("puts the request's version first and the other after, as failover", () => {
    expect(versionOrder(ranked, pool, "v1", canary, false)).toEqual([
      "http://b",
      "http://a",
      "http://c",
    ]);
    expect(versionOrder(ranked, pool, "v2", canary, false)).toEqual([
      "http://c",
      "http://b",
      "http://a",
    ]);
  });

  it("leaves the canary's replicas out once it is rolled back", () => {
    expect(versionOrder(ranked, pool, "v1", canary, true)).toEqual(["http://b", "http://a"]);
    expect(versionOrder(ranked, pool, "v2", canary, true)).toEqual(["http://b", "http://a"]);
  });
});
