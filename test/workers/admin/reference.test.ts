// GET /docs: the API reference page renders openapi.json and, like the document, needs no key
// (the tests' Worker has API_KEYS set, so a keyed route without one answers 401).
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE } from "../../support/workers/helpers";

describe("GET /docs", () => {
  it("is an HTML page that loads /openapi.json, served without a key", async () => {
    const response = await SELF.fetch(`${BASE}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toMatch(/<html/i);
    expect(html).toContain("/openapi.json");
    expect(html).toContain("SwaggerUIBundle");
  });

  it("is public while the models list is not", async () => {
    expect((await SELF.fetch(`${BASE}/v1/models`)).status).toBe(401);
    expect((await SELF.fetch(`${BASE}/docs`)).status).toBe(200);
  });
});
