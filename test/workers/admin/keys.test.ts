// /admin/keys: keys as data. The secret is shown once and only its hash is stored; rotation and
// revocation stop the old secret (in this isolate at once, elsewhere within KEY_CACHE_TTL_MS);
// only an admin key manages keys.
import { env, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KEY_CACHE_TTL_MS } from "../../../src/tasks/keys/key-cache";
import { BASE, KEY, problem } from "../../support/workers/helpers";
import { bearer, issueKey } from "../../support/workers/keys";

const models = (key: string) => SELF.fetch(`${BASE}/v1/models`, { headers: bearer(key) });
const admin = (path: string, init: RequestInit = {}, key = KEY) =>
  SELF.fetch(`${BASE}/admin/keys${path}`, {
    ...init,
    headers: { ...bearer(key), "content-type": "application/json" },
  });

describe("/admin/keys", () => {
  afterEach(() => vi.useRealTimers());

  it("creates a key whose secret is shown once and stored only as its hash", async () => {
    const issued = await issueKey(["generate"], { tokens_per_minute: 1000 });
    expect(issued.key).toMatch(/^ei_[A-Za-z0-9_-]{43}$/);
    expect(issued).toMatchObject({ scopes: ["generate"], limits: { tokens_per_minute: 1000 } });
    expect((await models(issued.key)).status).toBe(200);
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
      .bind(issued.id)
      .first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toContain(issued.key);
    const listed = await (await admin("")).json<{ data: Array<Record<string, unknown>> }>();
    const mine = listed.data.find((key) => key.id === issued.id);
    expect(mine).toMatchObject({ id: issued.id, prefix: issued.key.slice(0, 9) });
    expect(JSON.stringify(listed)).not.toContain(issued.key);
    const one = await (await admin(`/${issued.id}`)).json<Record<string, unknown>>();
    expect(one).not.toHaveProperty("key");
  });

  it("rotates: the new secret works, the old one is refused at once", async () => {
    const issued = await issueKey(["classify"]);
    expect((await models(issued.key)).status).toBe(200);
    const rotated = await admin(`/${issued.id}/rotate`, { method: "POST" });
    expect(rotated.status).toBe(200);
    const fresh = await rotated.json<{ id: string; key: string; rotated_at: string }>();
    expect(fresh.id).toBe(issued.id);
    expect(fresh.key).not.toBe(issued.key);
    expect((await models(issued.key)).status).toBe(401);
    expect((await models(fresh.key)).status).toBe(200);
  });

  it("revokes: refused at once here, and the revocation is kept", async () => {
    const issued = await issueKey(["classify"]);
    expect((await models(issued.key)).status).toBe(200);
    const revoked = await admin(`/${issued.id}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ revoked_at: expect.any(String) });
    const refused = await models(issued.key);
    expect(refused.status).toBe(401);
    expect((await problem(refused)).code).toBe("unauthorized");
    expect((await admin(`/${issued.id}/rotate`, { method: "POST" })).status).toBe(404);
  });

  it(`a revocation made elsewhere reaches this isolate within ${KEY_CACHE_TTL_MS} ms`, async () => {
    const issued = await issueKey(["classify"]);
    vi.useFakeTimers({ toFake: ["Date"] });
    expect((await models(issued.key)).status).toBe(200);
    // Another isolate revokes: D1 changes, this isolate's cache does not hear of it.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), issued.id)
      .run();
    vi.advanceTimersByTime(KEY_CACHE_TTL_MS - 1000);
    expect((await models(issued.key)).status).toBe(200);
    vi.advanceTimersByTime(1000);
    expect((await models(issued.key)).status).toBe(401);
  });

  it("answers 404 for an unknown key and 400 for a malformed id", async () => {
    expect((await admin("/key_0000000000000000")).status).toBe(404);
    const malformed = await admin("/not-a-key", { method: "DELETE" });
    expect(malformed.status).toBe(400);
    expect((await problem(malformed)).field).toBe("id");
  });

  it("refuses a request that would create a key with an unknown scope", async () => {
    const response = await admin("", {
      method: "POST",
      body: JSON.stringify({ name: "x", scopes: ["root"] }),
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).field).toBe("scopes.0");
  });

  it("lets no key without the admin scope create, read, rotate or revoke keys", async () => {
    const target = await issueKey(["generate"]);
    const { key } = await issueKey([
      "generate",
      "classify",
      "fraud:score",
      "fraud:read",
      "metrics",
    ]);
    const attempts = [
      admin("", { method: "POST", body: JSON.stringify({ name: "x", scopes: ["admin"] }) }, key),
      admin("", {}, key),
      admin(`/${target.id}`, {}, key),
      admin(`/${target.id}/rotate`, { method: "POST" }, key),
      admin(`/${target.id}`, { method: "DELETE" }, key),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(403);
      expect((await problem(response)).code).toBe("insufficient_scope");
    }
    expect((await models(target.key)).status).toBe(200);
  });
});
