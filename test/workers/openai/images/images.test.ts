// POST /v1/images/generations and the Workers AI shape on /v1/run/{model}, inside workerd,
// with digit-diffusion's loop on the reference origin (a real process on loopback): PNGs of
// the requested size, the same seed → the same bytes, OpenAI's stream events, the client
// leaving stops the origin's loop, and problem+json 400s naming the field.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import {
  appOnOrigin,
  call,
  frames,
  fromBase64,
  originCounters,
  pixels,
} from "../../../support/workers/images";

const origin = inject("imagesOrigin");
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

interface ImagesBody {
  created: number;
  data: { b64_json: string }[];
  size: string;
  output_format: string;
  usage: { input_tokens: number };
}

describe.skipIf(origin === null)("images: OpenAI Images API and Workers AI's text-to-image", () => {
  const app = () => appOnOrigin(origin?.url ?? "");

  it("returns n base64 PNGs of the requested size", async () => {
    const response = await call(app(), "/v1/images/generations", {
      prompt: "a handwritten seven",
      n: 2,
      size: "56x56",
      steps: 4,
      seed: 1,
    });
    expect(response.status).toBe(200);
    const body = await response.json<ImagesBody>();
    expect(body).toMatchObject({ size: "56x56", output_format: "png" });
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.data).toHaveLength(2);
    const [first, second] = body.data.map((image) => fromBase64(image.b64_json));
    expect([...first!.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    expect(pixels(first!)).toMatchObject({ width: 56, height: 56, channels: 1 });
    // Image i uses seed + i: two different images.
    expect(first).not.toEqual(second);
  });

  it(
    "the same seed and parameters give the " + "same PNG bytes; /v1/run gives that PNG raw",
    async () => {
      const request = {
        prompt: "digit 3",
        steps: 5,
        seed: 42,
        scheduler: "euler",
        guidance_scale: 3,
      };
      const [a, b] = await Promise.all([
        call(app(), "/v1/images/generations", request),
        call(app(), "/v1/images/generations", request),
      ]);
      const [pngA, pngB] = [
        fromBase64((await a.json<ImagesBody>()).data[0]!.b64_json),
        fromBase64((await b.json<ImagesBody>()).data[0]!.b64_json),
      ];
      expect(pngA).toEqual(pngB);
      const other = await call(app(), "/v1/images/generations", { ...request, seed: 43 });
      expect(fromBase64((await other.json<ImagesBody>()).data[0]!.b64_json)).not.toEqual(pngA);
      const raw = await call(app(), "/v1/run/digit-diffusion", {
        prompt: "digit 3",
        num_steps: 5,
        seed: 42,
        scheduler: "euler",
        guidance: 3,
      });
      expect(raw.status).toBe(200);
      expect(raw.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await raw.arrayBuffer())).toEqual(pngA);
    },
  );

  // OpenAI's image stream is ImageGenStreamEvent (openai-node src/resources/images.ts):
  // partial_image events, then completed; no `data: [DONE]` (the OpenAPI spec's `stream` says
  // so for chat completions only, and the SDK's src/core/streaming.ts just stops at one).
  it(
    "streams partial_image previews, then completed, which " +
      "ends the stream (OpenAI's event shapes, no [DONE])",
    async () => {
      const response = await call(app(), "/v1/images/generations", {
        prompt: "the number five",
        stream: true,
        partial_images: 2,
        steps: 6,
        seed: 5,
        size: "112x112",
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const events = await frames(response);
      expect(events.map((frame) => frame.data)).not.toContain("[DONE]");
      const parsed = events.map((frame) => ({
        event: frame.event,
        body: JSON.parse(frame.data) as Record<string, unknown>,
      }));
      expect(parsed.map((frame) => frame.event)).toEqual([
        "image_generation.partial_image",
        "image_generation.partial_image",
        "image_generation.completed",
      ]);
      const [p0, p1, done] = parsed.map((frame) => frame.body);
      for (const event of [p0, p1, done]) {
        expect(event).toMatchObject({
          background: "opaque",
          output_format: "png",
          quality: "auto",
          size: "112x112",
        });
        expect(typeof event?.created_at).toBe("number");
        expect(pixels(fromBase64(String(event?.b64_json)))).toMatchObject({
          width: 112,
          height: 112,
        });
      }
      expect(p0).toMatchObject({ type: "image_generation.partial_image", partial_image_index: 0 });
      expect(p1).toMatchObject({ type: "image_generation.partial_image", partial_image_index: 1 });
      expect(done).toMatchObject({
        type: "image_generation.completed",
        usage: { input_tokens: expect.any(Number), output_tokens: 0 },
      });
      // The completed image is the non-streamed one.
      const plain = await call(app(), "/v1/images/generations", {
        prompt: "the number five",
        steps: 6,
        seed: 5,
        size: "112x112",
      });
      expect((await plain.json<ImagesBody>()).data[0]?.b64_json).toBe(done?.b64_json);
    },
  );

  it("a client that leaves mid-stream stops the loop at the origin", async () => {
    const url = origin?.url ?? "";
    const before = await originCounters(url);
    const abort = new AbortController();
    const response = await call(
      app(),
      "/v1/images/generations",
      { prompt: "seven", stream: true, partial_images: 3, steps: 200, seed: 9 },
      abort.signal,
    );
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read(); // the first preview arrived: the loop runs
    abort.abort();
    await reader.cancel().catch(() => undefined);
    let counters = await originCounters(url);
    for (let i = 0; i < 100 && counters.aborted <= before.aborted; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      counters = await originCounters(url);
    }
    expect(counters.aborted).toBe(before.aborted + 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const later = await originCounters(url);
    expect(later.imageSteps).toBe(counters.imageSteps);
    expect(later.imageSteps - before.imageSteps).toBeLessThan(200);
    expect(later.running).toBe(0);
  });

  // A failure after the headers: an `error` event (as openai-node's Stream reads one:
  // src/core/streaming.ts throws an APIError of its `error` member), which ends the stream.
  it(
    "an origin failing mid-stream: an error event ends the stream " +
      "(no [DONE]), a 502 problem otherwise; 429 passes through",
    async () => {
      const failing = appOnOrigin(`${origin?.filesUrl ?? ""}/fail-mid-stream`);
      const response = await call(failing, "/v1/images/generations", {
        prompt: "seven",
        stream: true,
        partial_images: 3,
        steps: 20,
        seed: 1,
      });
      expect(response.status).toBe(200);
      const events = await frames(response);
      expect(events.map((frame) => frame.event)).toEqual([
        "image_generation.partial_image",
        "error",
      ]);
      expect(JSON.parse(events[1]!.data)).toMatchObject({
        type: "error",
        error: {
          type: "server_error",
          code: "upstream_error",
          message: expect.stringMatching(/CUDA out of memory/),
        },
      });
      const plain = await call(failing, "/v1/images/generations", {
        prompt: "seven",
        steps: 20,
        seed: 1,
      });
      expect(plain.status).toBe(502);
      expect((await plain.json<{ code: string }>()).code).toBe("upstream_error");
      const busy = await call(
        appOnOrigin(`${origin?.filesUrl ?? ""}/busy`),
        "/v1/images/generations",
        { prompt: "seven", seed: 1 },
      );
      expect(busy.status).toBe(429);
      expect(busy.headers.get("retry-after")).toBe("7");
    },
  );

  it("a pool steps around a busy replica and an unreachable one, same image bytes", async () => {
    const generate = (app: ReturnType<typeof appOnOrigin>) =>
      call(app, "/v1/images/generations", { prompt: "seven", size: "28x28", steps: 4, seed: 3 });
    const alone = await (await generate(app())).json<ImagesBody>();
    const pooled = appOnOrigin("", {
      replicas: [
        { url: `${origin?.filesUrl ?? ""}/busy`, weight: 1 },
        { url: "http://127.0.0.1:9", weight: 1 },
        { url: origin?.url ?? "", weight: 1 },
      ],
    });
    for (let request = 0; request < 3; request += 1) {
      const response = await generate(pooled);
      expect(response.status).toBe(200);
      expect((await response.json<ImagesBody>()).data).toEqual(alone.data);
    }
  });

  it("the model is listed, and its OIP metadata and readiness answer without a 500", async () => {
    const get = (path: string) =>
      Promise.resolve(
        app().request(
          `https://edge.test${path}`,
          { headers: { authorization: "Bearer test-key-1" } },
          env,
        ),
      );
    const models = await (await get("/v1/models")).json<{
      data: Array<{ id: string; task?: string }>;
    }>();
    expect(models.data.find((model) => model.id === "digit-diffusion")).toMatchObject({
      task: "text-to-image",
    });
    for (const path of [
      "/v1/models/digit-diffusion",
      "/v2/models/digit-diffusion",
      "/v2/models/digit-diffusion/ready",
      "/v2/models/digit-diffusion/config",
    ]) {
      expect((await get(path)).status, path).toBeLessThan(500);
    }
    const infer = await call(app(), "/v2/models/digit-diffusion/infer", {
      inputs: [{ name: "x", datatype: "FP32", shape: [1], data: [1] }],
    });
    expect(infer.status).toBeGreaterThanOrEqual(400);
    expect(infer.status).toBeLessThan(500);
  });

  it(
    "refuses what it does not serve with a 400 " + "naming the field (OpenAI error member)",
    async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ response_format: "url" }, "response_format"],
        [{ output_format: "jpeg" }, "output_format"],
        [{ size: "1024x1024" }, "size"],
        [{ n: 5 }, "n"],
        [{ partial_images: 4 }, "partial_images"],
        [{ scheduler: "pndm" }, "scheduler"],
        [{ steps: 0 }, "steps"],
        [{ style: "vivid" }, "style"],
        [{ prompt: "seven ".repeat(200) }, "prompt"],
        [{ prompt: "" }, "prompt"],
      ];
      for (const [fields, field] of cases) {
        const response = await call(app(), "/v1/images/generations", {
          prompt: "seven",
          ...fields,
        });
        expect(response.status, field).toBe(400);
        expect(response.headers.get("content-type")).toMatch(/problem\+json/);
        const body = await response.json<{
          field: string;
          error: { param: string | null; type: string };
        }>();
        expect(body.field, JSON.stringify(fields).slice(0, 80)).toBe(field);
        expect(body.error).toMatchObject({ param: field, type: "invalid_request_error" });
      }
      const wrongSize = await call(app(), "/v1/run/digit-diffusion", {
        prompt: "seven",
        width: 100,
      });
      expect(wrongSize.status).toBe(400);
      expect((await wrongSize.json<{ field: string }>()).field).toBe("width");
      const unknown = await call(app(), "/v1/images/generations", {
        prompt: "seven",
        model: "nope",
      });
      expect(unknown.status).toBe(404);
    },
  );
});
