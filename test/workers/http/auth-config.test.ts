// Auth with no keys configured: open only when ALLOW_ANONYMOUS is "true" (local dev).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";

const app = createApp();

describe("auth without configured keys", () => {
  it("fails closed by default", async () => {
    const response = await app.request("/v1/models", {}, { ...env, API_KEYS: "" });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      code: "unauthorized",
      detail: expect.stringMatching(/No API keys/),
    });
  });

  it("is off in local dev", async () => {
    const response = await app.request(
      "/v1/models",
      {},
      { ...env, API_KEYS: " , ", ALLOW_ANONYMOUS: "true" },
    );
    expect(response.status).toBe(200);
  });

  it("stays on in local dev once a key is configured", async () => {
    const response = await app.request("/v1/models", {}, { ...env, ALLOW_ANONYMOUS: "true" });
    expect(response.status).toBe(401);
  });
});
