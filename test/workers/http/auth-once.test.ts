// API_KEYS is parsed and its keys hashed once per configured value, not on every request:
// counted on workerd's own SubtleCrypto digest, through the real middleware in a Hono app.
import { env as testEnv } from "cloudflare:test";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { toServiceError } from "../../../src/errors/problem";
import { requireApiKey } from "../../../src/routes/http/auth";

function app() {
  const hono = new Hono<{ Bindings: Env }>();
  hono.use(requireApiKey);
  hono.get("/", (c) => c.text("ok"));
  hono.onError((error) => new Response(null, { status: toServiceError(error).status }));
  return hono;
}

const env = (keys: string): Env => ({ ...testEnv, API_KEYS: keys, ALLOW_ANONYMOUS: "false" });
const call = (keys: string, key: string) =>
  app().request("/", { headers: { authorization: `Bearer ${key}` } }, env(keys));

describe("requireApiKey", () => {
  afterEach(() => vi.restoreAllMocks());

  it("hashes the configured keys once per value, then only the presented key", async () => {
    const digest = vi.spyOn(crypto.subtle, "digest");
    expect((await call("k1,k2,k3", "k2")).status).toBe(200);
    const first = digest.mock.calls.length;
    expect(first).toBe(4); // three configured keys + the presented one
    for (let i = 0; i < 5; i++)
      expect((await call("k1,k2,k3", i % 2 ? "k3" : "nope")).status).toBe(i % 2 ? 200 : 401);
    expect(digest.mock.calls.length - first).toBe(5);
    // A new configured value (a rotated secret) is hashed once, and the old keys stop working.
    expect((await call("k9", "k1")).status).toBe(401);
    expect((await call("k9", "k9")).status).toBe(200);
    expect(digest.mock.calls.length - first).toBe(5 + 1 + 2);
  });
});
