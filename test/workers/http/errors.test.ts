// Every bad input gets a 4xx problem+json naming what failed; none produces a 500.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE, get, post, problem } from "../../support/workers/helpers";

describe("request validation", () => {
  it("400 names the missing field", async () => {
    const response = await post("/v1/classify", { input: "hello" });
    expect(response.status).toBe(400);
    const body = await problem(response);
    expect(body).toMatchObject({ status: 400, code: "invalid_request", field: "model" });
  });

  it("400 names a wrongly typed nested field", async () => {
    const response = await post("/v1/classify", { model: "spam-classifier", input: ["ok", 42] });
    const body = await problem(response);
    expect(response.status).toBe(400);
    expect(body.field).toBe("input.1");
  });

  it("400 for unknown request members", async () => {
    const response = await post("/v1/classify", {
      model: "spam-classifier",
      input: "x",
      temperature: 1,
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toMatch(/temperature/);
  });

  it("400 for an empty text and for top_k out of range", async () => {
    expect(
      (await problem(await post("/v1/classify", { model: "spam-classifier", input: "" }))).field,
    ).toBe("input");
    const topK = await post("/v1/classify", { model: "spam-classifier", input: "hi", top_k: 0 });
    expect(topK.status).toBe(400);
    expect((await problem(topK)).field).toBe("top_k");
  });

  it("400 invalid_json for malformed JSON, on every kind of route", async () => {
    for (const path of [
      "/v1/classify",
      "/v1/fraud/score",
      "/v2/models/spam-classifier/infer",
      "/v1/webhooks/adyen",
    ]) {
      const response = await post(path, '{"model": "spam-classifier", "input": ');
      expect(response.status, path).toBe(400);
      expect(await problem(response), path).toMatchObject({
        code: "invalid_json",
        field: "body",
        title: "Malformed JSON body",
      });
    }
  });

  it(
    "each protocol's error member: OIP's string on " +
      "/v2, OpenAI's object on /v1, none on webhooks",
    async () => {
      const oip = await problem(await get("/v2/no-such-route"));
      expect(oip).toMatchObject({
        status: 404,
        code: "not_found",
        error: "No route for GET /v2/no-such-route",
      });
      const openai = await problem(await get("/v1/models/no-such-model"));
      expect(openai.error).toEqual({
        message: openai.detail,
        type: "invalid_request_error",
        code: "model_not_found",
        param: "model",
      });
      const webhook = await problem(await post("/v1/webhooks/stripe", {}, { authorization: "" }));
      expect(webhook).toMatchObject({ status: 400, field: "headers.stripe-signature" });
      expect(webhook.error).toBeUndefined();
    },
  );

  it("415 for a body that is not JSON", async () => {
    const response = await post("/v1/classify", "model=spam-classifier", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(response.status).toBe(415);
    expect(await problem(response)).toMatchObject({
      code: "unsupported_media_type",
      field: "headers.content-type",
    });
  });

  it("413 for a body over the limit, declared or streamed", async () => {
    const big = JSON.stringify({ model: "spam-classifier", input: "a".repeat(1_100_000) });
    const declared = await post("/v1/classify", big);
    expect(declared.status).toBe(413);
    expect((await problem(declared)).code).toBe("payload_too_large");

    const chunks = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < chunks.length; offset += 65_536)
          controller.enqueue(chunks.slice(offset, offset + 65_536));
        controller.close();
      },
    });
    const streamed = await SELF.fetch(`${BASE}/v1/classify`, {
      method: "POST",
      headers: { authorization: "Bearer test-key-1", "content-type": "application/json" },
      body: stream,
    });
    expect(streamed.status).toBe(413);
  });

  it("404 for an unknown model, naming the field", async () => {
    const response = await post("/v1/classify", { model: "no-such-model", input: "hello" });
    expect(response.status).toBe(404);
    expect(await problem(response)).toMatchObject({ code: "model_not_found", field: "model" });
    expect((await problem(await post("/v1/run/no-such-model", { text: "hi" }))).code).toBe(
      "model_not_found",
    );
  });

  it("404 problem for an unknown route", async () => {
    const response = await get("/v1/nothing-here");
    expect(response.status).toBe(404);
    expect((await problem(response)).code).toBe("not_found");
  });

  it("422 for more texts than a request may carry", async () => {
    const response = await post("/v1/classify", {
      model: "spam-classifier",
      input: Array.from({ length: 65 }, () => "hi"),
    });
    expect(response.status).toBe(422);
    expect(await problem(response)).toMatchObject({ code: "unprocessable_input", field: "input" });
  });
});

describe("authentication", () => {
  it("401 without a key, with a challenge", async () => {
    const response = await get("/v1/models", {});
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await problem(response)).toMatchObject({
      code: "unauthorized",
      field: "headers.authorization",
    });
  });

  it("401 with a wrong key or scheme", async () => {
    expect((await get("/v1/models", { authorization: "Bearer test-key-3" })).status).toBe(401);
    expect((await get("/v1/models", { authorization: "Basic dGVzdC1rZXktMQ==" })).status).toBe(401);
    expect(
      (await post("/v2/models/spam-classifier/infer", {}, { authorization: "Bearer nope" })).status,
    ).toBe(401);
  });

  it("accepts every configured key", async () => {
    expect((await get("/v1/models", { authorization: "Bearer test-key-1" })).status).toBe(200);
    expect((await get("/v1/models", { authorization: "bearer test-key-2" })).status).toBe(200);
  });

  it("leaves health probes open", async () => {
    expect((await get("/v2/health/live", {})).status).toBe(200);
  });
});
