import { describe, expect, it } from "vitest";
import { get } from "./helpers";

describe("GET /openapi.json", () => {
  it("documents the routes from their zod schemas", async () => {
    const response = await get("/openapi.json", {});
    expect(response.status).toBe(200);
    const document = await response.json<{ openapi: string; paths: Record<string, unknown> }>();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(["/v1/classify", "/v1/run/{model}", "/v1/fraud/score", "/v2/models/{name}/infer"]),
    );
  });
});
