// The reference origin's diffusion engine over HTTP, as a real process on loopback serving
// models/digit-diffusion: the tensor-stream protocol's events (latents per reported step,
// then the image, then [DONE]), determinism (same ids and noise → the same image; the
// origin's own seeded noise = the edge's), UNet runs shared by concurrent requests (seen in
// /metrics), a client that leaves stops its loop, and input errors as problem+json.
// Skipped without models/digit-diffusion (it arrives with the diffusion-model branch).
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startOrigin } from "../../../../scripts/lib/origin.mjs";
import { requestNoise } from "../../../../src/generation/diffusion";
import { TensorStreamEvent } from "../../../../src/protocols/tensor-stream";

const MODEL = "models/digit-diffusion";
const present = existsSync(join(MODEL, "manifest.json"));
const Manifest = z.object({
  diffusion: z.object({
    promptLength: z.number(),
    latentShape: z.array(z.number()),
    padTokenId: z.number(),
  }),
});
const spec = present
  ? Manifest.parse(JSON.parse(readFileSync(join(MODEL, "manifest.json"), "utf8"))).diffusion
  : { promptLength: 16, latentShape: [4, 7, 7], padTokenId: 0 };
const latentSize = spec.latentShape.reduce((a, b) => a * b, 1);

type OriginProcess = Awaited<ReturnType<typeof startOrigin>>;
let origin: OriginProcess | undefined;
let dir = "";
const url = () => origin?.url ?? "";

function ids(n: number, prompt: number[] = [20, 21, 22]): number[] {
  const row = [
    ...prompt,
    ...new Array<number>(spec.promptLength - prompt.length).fill(spec.padTokenId),
  ];
  return Array.from({ length: n }, () => row).flat();
}

function body(n: number, parameters: Record<string, unknown>, withNoise = true, seed = 11) {
  const inputs: unknown[] = [
    { name: "input_ids", datatype: "INT64", shape: [n, spec.promptLength], data: ids(n) },
  ];
  if (withNoise)
    inputs.push({
      name: "noise",
      datatype: "FP32",
      shape: [n, ...spec.latentShape],
      data: Array.from(requestNoise(seed, n, latentSize)),
    });
  return { inputs, parameters };
}

const post = (path: string, payload: unknown, signal?: AbortSignal) =>
  fetch(`${url()}/v2/models/digit-diffusion/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(payload),
    ...(signal ? { signal } : {}),
  });

async function events(response: Response): Promise<string[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return (await response.text())
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      expect(frame.startsWith("data: ")).toBe(true);
      return frame.slice(6);
    });
}

async function metric(name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${url()}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

describe.skipIf(!present)("origin diffusion engine (tensor-stream protocol)", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "origin-diffusion-"));
    cpSync(MODEL, join(dir, "digit-diffusion"), { recursive: true });
    origin = await startOrigin({ ORIGIN_MODELS: dir, ORIGIN_MAX_BATCH: "64" });
  }, 150_000);
  afterAll(async () => {
    await origin?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("streams the reported steps' latents, then the image, then [DONE]", async () => {
    const frames = await events(
      await post("generate_stream", {
        id: "req-1",
        ...body(2, { steps: 6, preview_every: 2, scheduler: "ddim", guidance_scale: 3 }),
      }),
    );
    expect(frames.at(-1)).toBe("[DONE]");
    const parsed = frames.slice(0, -1).map((frame) => TensorStreamEvent.parse(JSON.parse(frame)));
    expect(parsed.map((event) => [event.step, event.final, event.outputs[0]?.name])).toEqual([
      [2, false, "latent"],
      [4, false, "latent"],
      [6, false, "latent"],
      [6, true, "image"],
    ]);
    expect(parsed.every((event) => event.id === "req-1")).toBe(true);
    expect(parsed[0]?.outputs[0]?.shape).toEqual([2, ...spec.latentShape]);
    const image = parsed.at(-1)?.outputs[0];
    expect(image?.shape).toEqual([2, 1, 28, 28]);
    expect(image?.data.length).toBe(2 * 784);
    expect(image?.data.every((value) => value >= 0 && value <= 1)).toBe(true);
  });

  it(
    "is deterministic: same ids and noise → the same " +
      "image; the origin's seeded noise is the edge's",
    async () => {
      const request = body(1, { steps: 5, scheduler: "euler", preview_every: 0 }, true, 77);
      const [a, b] = [
        await (await post("generate", request)).json(),
        await (await post("generate", request)).json(),
      ];
      expect(a).toEqual(b);
      const seeded = await (
        await post(
          "generate",
          body(1, { steps: 5, scheduler: "euler", preview_every: 0, seed: 77 }, false),
        )
      ).json();
      expect(seeded).toEqual(a);
      const other = await (
        await post(
          "generate",
          body(1, { steps: 5, scheduler: "euler", preview_every: 0 }, true, 78),
        )
      ).json();
      expect(other).not.toEqual(a);
    },
  );

  it("concurrent requests share UNet runs (rows per run > one image's 2)", async () => {
    const [runs, rows] = [
      await metric("origin_diffusion_unet_runs_total"),
      await metric("origin_diffusion_unet_rows_total"),
    ];
    const all = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        post("generate", body(1, { steps: 10, preview_every: 0 }, true, 100 + i)),
      ),
    );
    expect(all.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    const [runsAfter, rowsAfter] = [
      await metric("origin_diffusion_unet_runs_total"),
      await metric("origin_diffusion_unet_rows_total"),
    ];
    expect(rowsAfter - rows).toBe(4 * 10 * 2);
    // 40 image-steps in fewer than 40 runs: requests at different steps shared batches.
    expect(runsAfter - runs).toBeLessThan(40);
    expect((rowsAfter - rows) / (runsAfter - runs)).toBeGreaterThan(2);
  });

  it("an image is the same alone and inside a shared batch", async () => {
    const request = body(1, { steps: 8, preview_every: 0 }, true, 500);
    const alone = await (await post("generate", request)).json();
    const [together] = await Promise.all([
      post("generate", request),
      ...Array.from({ length: 3 }, (_, i) =>
        post("generate", body(2, { steps: 5 + i, preview_every: 0 }, true, 600 + i)),
      ),
    ]);
    expect(await together!.json()).toEqual(alone);
  });

  it("a client that leaves stops its loop at the origin", async () => {
    const before = {
      steps: await metric("origin_diffusion_image_steps_total"),
      aborted: await metric("origin_diffusion_requests_total", 'outcome="aborted"'),
    };
    const abort = new AbortController();
    const response = await post(
      "generate_stream",
      body(1, { steps: 1000, preview_every: 1 }),
      abort.signal,
    );
    const reader = response.body!.getReader();
    await reader.read(); // the first step's latent arrived: the loop runs
    abort.abort();
    let aborted = before.aborted;
    for (let i = 0; i < 100 && aborted <= before.aborted; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      aborted = await metric("origin_diffusion_requests_total", 'outcome="aborted"');
    }
    expect(aborted).toBe(before.aborted + 1);
    const stepsAtAbort = await metric("origin_diffusion_image_steps_total");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await metric("origin_diffusion_image_steps_total")).toBe(stepsAtAbort);
    expect(stepsAtAbort - before.steps).toBeLessThan(1000);
    expect(await metric("origin_diffusion_requests_running")).toBe(0);
  });

  it("bad input is a 400 problem naming the field; unknown models 404", async () => {
    const cases: Array<[unknown, string]> = [
      [
        {
          inputs: [{ name: "input_ids", datatype: "INT64", shape: [1, 3], data: [1, 2, 3] }],
          parameters: { seed: 1 },
        },
        "inputs.0.shape",
      ],
      [body(1, {}, false), "inputs"],
      [body(1, { scheduler: "pndm" }), "parameters.scheduler"],
      [body(1, { steps: 0 }), "parameters.steps"],
      [{ ...body(1, {}), extra: 1 }, "body"],
    ];
    for (const [payload, field] of cases) {
      const response = await post("generate_stream", payload);
      expect(response.status, field).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/problem\+json/);
      expect(((await response.json()) as { field?: string }).field).toBe(field);
    }
    const unknown = await fetch(`${url()}/v2/models/nope/generate_stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body(1, {})),
    });
    expect(unknown.status).toBe(404);
  });
});
