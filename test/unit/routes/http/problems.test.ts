// Hono's own exceptions (its JSON validator, @hono/zod-openapi's media-type gate, bodyLimit)
// leave with the service's codes, not a generic invalid_request.
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toServiceError } from "../../../../src/errors/problem";
import { dialectMembers, errorDialect } from "../../../../src/routes/http/problems";

describe("toServiceError", () => {
  it(
    "maps Hono's malformed-JSON 400 onto invalid_json " + "and its 415 onto unsupported_media_type",
    () => {
      expect(
        toServiceError(new HTTPException(400, { message: "Malformed JSON in request body" })),
      ).toMatchObject({ status: 400, code: "invalid_json", field: "body" });
      expect(
        toServiceError(new HTTPException(415, { message: "Unsupported Media Type" })),
      ).toMatchObject({
        status: 415,
        code: "unsupported_media_type",
        field: "headers.content-type",
      });
      expect(toServiceError(new HTTPException(413))).toMatchObject({
        status: 413,
        code: "payload_too_large",
      });
      expect(toServiceError(new HTTPException(404))).toMatchObject({
        status: 404,
        code: "not_found",
      });
    },
  );

  it("keeps a zod failure a 400 naming the field, and anything else a 500", () => {
    const zodError = z.object({ amount: z.number() }).safeParse({ amount: "x" }).error;
    expect(toServiceError(zodError)).toMatchObject({
      status: 400,
      code: "invalid_request",
      field: "amount",
    });
    expect(toServiceError(new Error("boom"))).toMatchObject({
      status: 500,
      code: "internal_error",
    });
  });
});

describe("error dialects", () => {
  it("follow the path: OIP on /v2, OpenAI on /v1 except the webhooks", () => {
    expect(
      [
        "/v2",
        "/v2/",
        "/v2/models/x/infer",
        "/v1",
        "/v1/chat/completions",
        "/v1/webhooks/stripe",
        "/openapi.json",
        "/v20",
        "/tokenize",
        "/detokenize",
      ].map(errorDialect),
    ).toEqual([
      "oip",
      "oip",
      "oip",
      "openai",
      "openai",
      "problem",
      "problem",
      "problem",
      "openai",
      "openai",
    ]);
    const error = toServiceError(new HTTPException(401, { message: "Nope" }));
    expect(dialectMembers("openai", error)).toEqual({
      error: { message: "Nope", type: "authentication_error", code: "unauthorized", param: null },
    });
    expect(dialectMembers("oip", error)).toEqual({ error: "Nope" });
    expect(dialectMembers("problem", error)).toEqual({});
  });
});
