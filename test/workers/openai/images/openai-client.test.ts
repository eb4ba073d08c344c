// The official `openai` SDK's images.generate against the Worker (its fetch goes into the
// app inside workerd; the loop runs on the reference origin): b64_json images, the
// streamed partial_image/completed events as its ImageGenStreamEvent types, and our 400s
// as its BadRequestError with our message and param.
import { env } from "cloudflare:test";
import OpenAI, { APIError } from "openai";
import { describe, expect, inject, it } from "vitest";
import { KEY } from "../../../support/workers/helpers";
import { appOnOrigin, fromBase64, pixels } from "../../../support/workers/images";

const origin = inject("imagesOrigin");

function client(): OpenAI {
  const app = appOnOrigin(origin?.url ?? "");
  return new OpenAI({
    apiKey: KEY,
    baseURL: "https://edge.test/v1",
    maxRetries: 0,
    fetch: async (input, init) =>
      app.request(input instanceof Request ? input : String(input), init, env),
  });
}

describe.skipIf(origin === null)("the openai SDK's images.generate", () => {
  it("returns b64_json PNGs", async () => {
    // seed and steps are ours (the SDK sends unknown fields as given).
    const params = {
      model: "digit-diffusion",
      prompt: "a handwritten two",
      n: 2,
      size: "56x56",
      seed: 3,
      steps: 4,
    };
    const result = await client().images.generate(params);
    expect(result.data).toHaveLength(2);
    expect(pixels(fromBase64(result.data?.[0]?.b64_json ?? ""))).toMatchObject({
      width: 56,
      height: 56,
    });
    expect(result.output_format).toBe("png");
  });

  it("streams partial_image and completed events", async () => {
    const params = {
      model: "digit-diffusion",
      prompt: "digit 8",
      stream: true as const,
      partial_images: 1,
      seed: 4,
      steps: 4,
    };
    const stream = await client().images.generate(params);
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      expect(fromBase64(event.b64_json).length).toBeGreaterThan(8);
    }
    expect(types).toEqual(["image_generation.partial_image", "image_generation.completed"]);
  });

  it(
    "an origin failing mid-stream: the stream's error " +
      "event is an APIError with our code and message",
    async () => {
      const failing = appOnOrigin(`${origin?.filesUrl ?? ""}/fail-mid-stream`);
      const sdk = new OpenAI({
        apiKey: KEY,
        baseURL: "https://edge.test/v1",
        maxRetries: 0,
        fetch: async (input, init) =>
          failing.request(input instanceof Request ? input : String(input), init, env),
      });
      const params = {
        model: "digit-diffusion",
        prompt: "seven",
        stream: true as const,
        partial_images: 3,
        steps: 20,
        seed: 1,
      };
      const stream = await sdk.images.generate(params);
      const types: string[] = [];
      try {
        for await (const event of stream) types.push(event.type);
        expect.unreachable("the stream ended without its error");
      } catch (error) {
        if (!(error instanceof APIError)) throw error;
        expect(error.code).toBe("upstream_error");
        expect(error.message).toMatch(/CUDA out of memory/);
      }
      expect(types).toEqual(["image_generation.partial_image"]);
    },
  );

  it("a refused field is a BadRequestError naming it", async () => {
    try {
      await client().images.generate({
        model: "digit-diffusion",
        prompt: "seven",
        response_format: "url",
      });
      expect.unreachable("the call succeeded");
    } catch (error) {
      if (!(error instanceof APIError)) throw error;
      expect(error.status).toBe(400);
      expect(error.param).toBe("response_format");
      expect(error.message).toMatch(/b64_json/);
    }
  });
});
