// The served OpenAPI document: every route documented, and byte-equal to the committed openapi.json
// that test/unit/routes/admin/openapi-lint.test.ts lints with Redocly and swagger-parser. After
// changing a route: `npx vitest run --project workers test/workers/admin/openapi.test.ts -u`.
import { describe, expect, it } from "vitest";
import { get } from "../../support/workers/helpers";

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

describe("GET /openapi.json", () => {
  it("is the committed openapi.json", async () => {
    const response = await get("/openapi.json", {});
    expect(response.status).toBe(200);
    const document = await response.json<Document>();
    await expect(`${JSON.stringify(document, null, 2)}\n`).toMatchFileSnapshot(
      "../../../openapi.json",
    );
  });

  it("documents every route, with no default responses", async () => {
    const document = await (await get("/openapi.json", {})).json<Document>();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/v1/classify",
        "/v1/run/{model}",
        "/v1/fraud/score",
        "/v1/models",
        "/v1/webhooks/stripe",
        "/v1/webhooks/adyen",
        "/v2",
        "/v2/health/live",
        "/v2/health/ready",
        "/v2/models/{name}",
        "/v2/models/{name}/ready",
        "/v2/models/{name}/infer",
        "/v2/models/{name}/versions/{version}/infer",
        "/openapi.json",
        "/metrics",
        "/v1/chat/completions",
        "/v1/completions",
      ]),
    );
    for (const operations of Object.values(document.paths)) {
      for (const operation of Object.values(operations))
        expect(Object.keys(operation.responses)).not.toContain("default");
    }
  });
});
