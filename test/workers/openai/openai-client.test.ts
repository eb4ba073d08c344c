// The real `openai` SDK against the Worker (its fetch is SELF.fetch): it lists and
// retrieves our models, and its errors carry our message, status, code and param, read
// from the OpenAI `error` member every /v1 problem carries (not "(no body)").
import { SELF } from "cloudflare:test";
import OpenAI, { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { BASE, KEY } from "../../support/workers/helpers";

function client(apiKey = KEY): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: `${BASE}/v1`,
    maxRetries: 0,
    fetch: (input, init) => SELF.fetch(input, init),
  });
}

/** The SDK's error for a call that must fail. */
async function failure(call: Promise<unknown>): Promise<APIError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error("the call succeeded");
}

describe("the openai SDK", () => {
  it("lists and retrieves models, each with created", async () => {
    const page = await client().models.list();
    const ids = page.data.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(["spam-classifier", "fraud-gru"]));
    for (const model of page.data) {
      expect(model).toMatchObject({ object: "model", owned_by: "edge-inference" });
      expect(Number.isInteger(model.created)).toBe(true);
      expect(model.created).toBeGreaterThan(1_600_000_000);
    }
    expect(await client().models.retrieve("spam-classifier")).toMatchObject({
      id: "spam-classifier",
      object: "model",
    });
  });

  it("401: AuthenticationError with our message", async () => {
    const error = await failure(client("wrong-key").models.list());
    expect(error.status).toBe(401);
    expect(error.message).toBe("401 The API key is not valid");
    expect(error).toMatchObject({
      code: "unauthorized",
      type: "authentication_error",
      param: "headers.authorization",
    });
  });

  it("404: NotFoundError naming the model", async () => {
    const error = await failure(client().models.retrieve("no-such-model"));
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/^404 No model named "no-such-model"/);
    expect(error).toMatchObject({
      code: "model_not_found",
      type: "invalid_request_error",
      param: "model",
    });
  });

  it("400: BadRequestError naming the field, on a POST route", async () => {
    const error = await failure(
      client().post("/classify", { body: { model: "spam-classifier", input: "" } }),
    );
    expect(error.status).toBe(400);
    expect(error.message).toBe("400 input: must not be empty");
    expect(error).toMatchObject({
      code: "invalid_request",
      type: "invalid_request_error",
      param: "input",
    });
  });

  it("an unknown /v1 route is a 404 the SDK can read", async () => {
    const error = await failure(client().get("/nothing-here"));
    expect(error.status).toBe(404);
    expect(error.message).toBe("404 No route for GET /v1/nothing-here");
    expect(error.code).toBe("not_found");
  });
});
