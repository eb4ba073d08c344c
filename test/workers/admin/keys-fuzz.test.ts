// Seeded fuzzing of the key routes by many actors: the bootstrap key, stored keys with random
// scopes (some admin), revoked keys, rotated-away secrets and made-up keys, sending valid and
// mutated requests. Never a 5xx; no key without `admin` creates, reads, rotates or revokes a
// key; a revoked key or an old secret is refused; D1 ends as the admins' actions say.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE, KEY } from "../../support/workers/helpers";

const SCOPES = ["generate", "classify", "fraud:score", "fraud:read", "metrics", "admin"];

/** mulberry32, as the route fuzz test seeds its runs. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

interface Key {
  id: string;
  secret: string;
  scopes: string[];
  revoked: boolean;
  /** Secrets rotated away: refused from then on. */
  old: string[];
}

type Actor =
  | { kind: "bootstrap" }
  | { kind: "key"; key: Key }
  | { kind: "old"; key: Key; secret: string }
  | { kind: "junk"; secret: string };

const secretOf = (actor: Actor) =>
  actor.kind === "bootstrap" ? KEY : actor.kind === "key" ? actor.key.secret : actor.secret;

const isAdmin = (actor: Actor) =>
  actor.kind === "bootstrap" ||
  (actor.kind === "key" && !actor.key.revoked && actor.key.scopes.includes("admin"));

const isValid = (actor: Actor) =>
  actor.kind === "bootstrap" || (actor.kind === "key" && !actor.key.revoked);

describe("seeded fuzzing of /admin/keys", () => {
  it.each([36, 2026, 777])("seed %i: no 5xx, no escalation, D1 as the admins did", async (seed) => {
    const random = generator(seed);
    const keys: Key[] = [];
    const tag = `fuzz-${seed}-${Date.now()}`;
    const statuses = new Map<number, number>();
    const actorOf = (): Actor => {
      const roll = random.next();
      if (roll < 0.15 || keys.length === 0) return { kind: "bootstrap" };
      if (roll < 0.75) return { kind: "key", key: random.pick(keys) };
      const rotated = keys.filter((key) => key.old.length > 0);
      if (roll < 0.88 && rotated.length > 0) {
        const key = random.pick(rotated);
        return { kind: "old", key, secret: random.pick(key.old) };
      }
      return {
        kind: "junk",
        secret: random.pick(["ei_", `ei_${"A".repeat(43)}`, "test-key-3", "x".repeat(300)]),
      };
    };
    for (let n = 0; n < 200; n++) {
      const actor = actorOf();
      const target = keys.length > 0 && random.next() < 0.9 ? random.pick(keys) : undefined;
      const id = target?.id ?? random.pick(["key_0123456789abcdef", "nope", "key_", ""]);
      const scopes = SCOPES.filter(() => random.next() < 0.35);
      const operation = random.pick(["create", "list", "get", "rotate", "revoke", "activity"]);
      const body =
        random.next() < 0.8
          ? JSON.stringify({ name: tag, scopes: scopes.length > 0 ? scopes : ["admin"] })
          : random.pick(['{"name": 1}', "{", `{"name":"${tag}","scopes":["root"]}`, "[]"]);
      const [method, path] = {
        create: ["POST", ""],
        list: ["GET", ""],
        get: ["GET", `/${id}`],
        rotate: ["POST", `/${id}/rotate`],
        revoke: ["DELETE", `/${id}`],
        activity: ["GET", `/${id}/activity`],
      }[operation]!;
      const response = await SELF.fetch(`${BASE}/admin/keys${path}`, {
        method,
        headers: { authorization: `Bearer ${secretOf(actor)}`, "content-type": "application/json" },
        ...(operation === "create" ? { body } : {}),
      });
      const label = `seed ${seed} #${n} ${actor.kind} ${operation}`;
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      expect(response.status, label).toBeLessThan(500);
      if (!isValid(actor)) expect(response.status, label).toBe(401);
      else if (!isAdmin(actor)) expect(response.status, label).toBe(403);
      else if (response.ok) {
        const answer = await response.json<{ id?: string; key?: string; scopes?: string[] }>();
        if (operation === "create") {
          keys.push({
            id: answer.id!,
            secret: answer.key!,
            scopes: answer.scopes!,
            revoked: false,
            old: [],
          });
        } else if (operation === "rotate" && target !== undefined) {
          target.old.push(target.secret);
          target.secret = answer.key!;
        } else if (operation === "revoke" && target !== undefined) {
          target.revoked = true;
        }
      } else {
        expect([400, 404], label).toContain(response.status);
        if (operation === "rotate" || operation === "revoke" || operation === "get")
          expect(target === undefined || (operation === "rotate" && target.revoked), label).toBe(
            true,
          );
      }
      if (!response.bodyUsed) await response.body?.cancel();
    }
    // D1 holds exactly the keys the admins created, revoked exactly as they revoked them.
    const { results } = await env.DB.prepare(
      "SELECT id, revoked_at FROM api_keys WHERE name = ? ORDER BY id",
    )
      .bind(tag)
      .all<{ id: string; revoked_at: string | null }>();
    expect(results).toEqual(
      keys
        .map((key) => ({ id: key.id, revoked: key.revoked }))
        .sort((a, b) => a.id.localeCompare(b.id))
        .map(({ id, revoked }) => ({ id, revoked_at: revoked ? expect.any(String) : null })),
    );
    // Every kind of refusal happened.
    for (const status of [200, 201, 401, 403]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
  });
});
