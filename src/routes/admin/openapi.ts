// GET /openapi.json: the OpenAPI 3.1 document, generated from the routes' zod schemas and
// problemResponses().
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/services";

export const OPENAPI_PATH = "/openapi.json";

/**
 * The committed copy (openapi.json) must stay equal to what the Worker serves:
 * test/workers/admin/openapi.test.ts compares them, test/unit/routes/admin/openapi-lint.test.ts
 * lints it (Redocly, swagger-parser) and test/workers/http/fuzz.test.ts checks answers against it.
 */
export function documentApi(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description:
      "A key issued by /admin/keys, with the scopes a route needs (generate, classify, " +
      "fraud:score, fraud:read, metrics, admin; 403 names a missing one), or one of the " +
      "API_KEYS secret's bootstrap keys (every scope)",
  });
  app.openAPIRegistry.registerPath({
    method: "get",
    path: OPENAPI_PATH,
    operationId: "openApiDocument",
    summary: "This document",
    security: [],
    responses: {
      200: {
        description: "The OpenAPI 3.1 document",
        content: { "application/json": { schema: { type: "object" } } },
      },
    },
  });
  app.doc31(OPENAPI_PATH, {
    openapi: "3.1.0",
    info: {
      title: "Edge inference service",
      version: "0.1.0",
      description:
        "Errors are application/problem+json (RFC 9457) with a stable `code`; " +
        "/v2 errors add the Open Inference Protocol's `error` string, " +
        "/v1 routes other than the webhooks add OpenAI's `error` object.",
    },
    servers: [{ url: "/", description: "The deployment serving this document" }],
    security: [{ bearer: [] }],
  });
}
