// The shipped digit diffusion pipeline's files, run for real: the manifest parses with the
// shared schema and its hashes hold; the tokenizer gives the fixtures' prompt ids
// (case-insensitively); the contract's seeded noise drawn from createPrng equals the Python
// reference's; each graph reproduces PyTorch on fixed inputs (onnxruntime-node, and
// onnxruntime-web WASM); and a DDIM / Euler loop written here from the contract (an
// independent check of scripts/diffusion/reference.py, not the service's scheduler) over
// the three ONNX graphs gives the Python loop's images.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";
import * as ort from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPrng } from "../../../src/generation/prng";
import {
  ManifestSchema,
  TextToImageSchema,
  type TextToImageManifest,
} from "../../../src/models/manifest";

const dir = "models/digit-diffusion";
const fixtures = "test/fixtures/digit-diffusion";
const manifestJson: unknown = JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8"));
const manifest: TextToImageManifest = TextToImageSchema.parse(manifestJson);
const { diffusion } = manifest;

const LoopCase = z.object({
  prompt: z.string(),
  heldOutPhrasing: z.boolean(),
  ids: z.array(z.number().int()),
  inputIds: z.array(z.number().int()),
  attentionMask: z.array(z.number().int()),
  seed: z.number().int(),
  scheduler: z.enum(["ddim", "euler"]),
  steps: z.number().int(),
  guidanceScale: z.number(),
  initNoiseSigma: z.number(),
  timesteps: z.array(z.number()),
  noiseFirst8: z.array(z.number()).length(8),
  predictedLatentFirst4: z.array(z.array(z.number())),
  image: z.array(z.number()).length(784),
});
const loops = z
  .object({ cases: z.array(LoopCase).min(1) })
  .parse(JSON.parse(readFileSync(`${fixtures}/loops.json`, "utf8"))).cases;
const graphsFixture = z
  .object({
    text_encoder: z.object({
      input_ids: z.array(z.array(z.number().int())),
      attention_mask: z.array(z.array(z.number().int())),
      text_embeds: z.array(z.number()),
    }),
    unet: z.object({
      sampleSeeds: z.array(z.number().int()),
      timestep: z.array(z.number()),
      noise_pred: z.array(z.number()),
    }),
    vae_decoder: z.object({ image: z.array(z.number()) }),
  })
  .parse(JSON.parse(readFileSync(`${fixtures}/graphs.json`, "utf8")));

/** The contract's noise: Box–Muller pairs over createPrng draws, each value rounded to float32. */
function seededNoise(seed: number, count: number): Float32Array {
  const prng = createPrng(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const u1 = prng.next();
    const u2 = prng.next();
    const r = Math.sqrt(-2 * Math.log(1 - u1));
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < count) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

const latentSize = diffusion.latentShape.reduce((a, b) => a * b, 1);
const sessions: Record<string, ort.InferenceSession> = {};

beforeAll(async () => {
  for (const role of ["text_encoder", "unet", "vae_decoder"]) {
    sessions[role] = await ort.InferenceSession.create(
      readFileSync(`${dir}/${manifest.graphs[role]!.file}`),
    );
  }
});

const f32 = (data: Float32Array, shape: number[]) => new ort.Tensor("float32", data, shape);
const i64 = (rows: number[][]) =>
  new ort.Tensor(
    "int64",
    BigInt64Array.from(rows.flat(), (v) => BigInt(v)),
    [rows.length, rows[0]!.length],
  );
async function output(role: string, feeds: Record<string, ort.Tensor>): Promise<Float32Array> {
  const result = await sessions[role]!.run(feeds);
  const first = Object.values(result)[0]!;
  return first.data as Float32Array;
}
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

describe("digit-diffusion manifest", () => {
  it("parses with the shared schema, and every file matches its sha256 and size", () => {
    expect(ManifestSchema.parse(manifestJson).task).toBe("text-to-image");
    expect(manifest).toMatchObject({ runtime: "origin", protocol: "tensor-stream" });
    const files = [...Object.values(manifest.graphs), manifest.tokenizer];
    for (const { file, sha256, bytes } of files) {
      const data = readFileSync(`${dir}/${file}`);
      expect(data.length, file).toBe(bytes);
      expect(createHash("sha256").update(data).digest("hex"), file).toBe(sha256);
    }
    expect(diffusion.preview.factors).toHaveLength(diffusion.latentShape[0]);
  });

  it("the shared schema refuses a pipeline without one of its three graphs", () => {
    const { unet: _unet, ...others } = manifest.graphs;
    expect(() => ManifestSchema.parse({ ...manifest, graphs: others })).toThrow(
      /graph \\"unet\\" is missing/,
    );
  });
});

describe("digit-diffusion tokenizer", () => {
  const config: Record<string, unknown> = JSON.parse(
    readFileSync(`${dir}/${manifest.tokenizer.config ?? "tokenizer_config.json"}`, "utf8"),
  );
  const tokenizer = new Tokenizer(
    JSON.parse(readFileSync(`${dir}/${manifest.tokenizer.file}`, "utf8")),
    config,
  );
  it("encodes the fixtures' prompts to their ids without special tokens, whatever the case", () => {
    for (const { prompt, ids, inputIds, attentionMask } of loops) {
      expect(tokenizer.encode(prompt, { add_special_tokens: false }).ids).toEqual(ids);
      expect(tokenizer.encode(prompt.toUpperCase(), { add_special_tokens: false }).ids).toEqual(
        ids,
      );
      expect(inputIds).toEqual([
        ...ids,
        ...Array<number>(diffusion.promptLength - ids.length).fill(diffusion.padTokenId),
      ]);
      expect(attentionMask).toEqual([
        ...ids.map(() => 1),
        ...Array<number>(diffusion.promptLength - ids.length).fill(0),
      ]);
    }
    expect(config.do_lower_case).toBe(true);
    expect(manifest.tokenizer.lowercase).toBe(true);
  });
});

describe("digit-diffusion seeded noise", () => {
  it("createPrng + Box–Muller gives the Python reference's first values, seed for seed", () => {
    for (const { seed, noiseFirst8 } of loops) {
      expect(Array.from(seededNoise(seed, latentSize).subarray(0, 8))).toEqual(noiseFirst8);
    }
  });
});

describe("digit-diffusion graphs (onnxruntime-node, FP32)", () => {
  it("each graph reproduces PyTorch on fixed inputs", async () => {
    const te = graphsFixture.text_encoder;
    const embeds = await output("text_encoder", {
      input_ids: i64(te.input_ids),
      attention_mask: i64(te.attention_mask),
    });
    expect(maxDiff(embeds, te.text_embeds)).toBeLessThan(2e-4);
    const sample = new Float32Array(2 * latentSize);
    graphsFixture.unet.sampleSeeds.forEach((seed, i) =>
      sample.set(seededNoise(seed, latentSize), i * latentSize),
    );
    const shape = [2, ...diffusion.latentShape];
    const eps = await output("unet", {
      sample: f32(sample, shape),
      timestep: f32(Float32Array.from(graphsFixture.unet.timestep), [2]),
      text_embeds: f32(embeds, [2, embeds.length / 2]),
    });
    expect(maxDiff(eps, graphsFixture.unet.noise_pred)).toBeLessThan(5e-4);
    const image = await output("vae_decoder", {
      latent: f32(
        sample.map((v) => v / diffusion.scalingFactor),
        shape,
      ),
    });
    expect(maxDiff(image, graphsFixture.vae_decoder.image)).toBeLessThan(2e-4);
  });
});

describe("digit-diffusion graphs (onnxruntime-web WASM, in Node)", () => {
  it("runs all three graphs and reproduces PyTorch on the same fixed inputs", async () => {
    ortWeb.env.wasm.numThreads = 1;
    const web = async (role: string) =>
      ortWeb.InferenceSession.create(readFileSync(`${dir}/${manifest.graphs[role]!.file}`));
    const te = graphsFixture.text_encoder;
    const rows = te.input_ids.length;
    const ids = (m: number[][]) =>
      new ortWeb.Tensor(
        "int64",
        BigInt64Array.from(m.flat(), (v) => BigInt(v)),
        [rows, m[0]!.length],
      );
    const embeds = (
      await (
        await web("text_encoder")
      ).run({ input_ids: ids(te.input_ids), attention_mask: ids(te.attention_mask) })
    ).text_embeds!.data as Float32Array;
    expect(maxDiff(embeds, te.text_embeds)).toBeLessThan(2e-4);
    const sample = new Float32Array(2 * latentSize);
    graphsFixture.unet.sampleSeeds.forEach((seed, i) =>
      sample.set(seededNoise(seed, latentSize), i * latentSize),
    );
    const shape = [2, ...diffusion.latentShape];
    const eps = (
      await (
        await web("unet")
      ).run({
        sample: new ortWeb.Tensor("float32", sample, shape),
        timestep: new ortWeb.Tensor("float32", Float32Array.from(graphsFixture.unet.timestep), [2]),
        text_embeds: new ortWeb.Tensor("float32", embeds, [2, embeds.length / 2]),
      })
    ).noise_pred!.data as Float32Array;
    expect(maxDiff(eps, graphsFixture.unet.noise_pred)).toBeLessThan(5e-4);
    const image = (
      await (
        await web("vae_decoder")
      ).run({
        latent: new ortWeb.Tensor(
          "float32",
          sample.map((v) => v / diffusion.scalingFactor),
          shape,
        ),
      })
    ).image!.data as Float32Array;
    expect(maxDiff(image, graphsFixture.vae_decoder.image)).toBeLessThan(2e-4);
  });
});

// --- An independent loop from the contract (diffusers' DDIM eta 0 / Euler discrete,
// "trailing"). ---
function alphasCumprod(): Float64Array {
  const { numTrainTimesteps: n, betaSchedule, betaStart, betaEnd } = diffusion.scheduler;
  const out = new Float64Array(n);
  let product = 1;
  for (let i = 0; i < n; i++) {
    const beta =
      betaSchedule === "linear"
        ? betaStart + ((betaEnd - betaStart) * i) / (n - 1)
        : (Math.sqrt(betaStart) + ((Math.sqrt(betaEnd) - Math.sqrt(betaStart)) * i) / (n - 1)) ** 2;
    product *= 1 - beta;
    out[i] = product;
  }
  return out;
}
function trailingTimesteps(steps: number): number[] {
  const n = diffusion.scheduler.numTrainTimesteps;
  const roundHalfEven = (x: number) =>
    Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x); // numpy's round
  return Array.from({ length: steps }, (_, k) => roundHalfEven(n - (k * n) / steps) - 1);
}

async function runLoop(c: z.infer<typeof LoopCase>): Promise<Float32Array> {
  const pad = Array<number>(diffusion.promptLength).fill(diffusion.padTokenId);
  const embeds = await output("text_encoder", {
    input_ids: i64([pad, c.inputIds]),
    attention_mask: i64([pad.map(() => 0), c.attentionMask]),
  });
  const acp = alphasCumprod();
  const ts = trailingTimesteps(c.steps);
  const n = latentSize;
  const shape = [2, ...diffusion.latentShape];
  const guided = async (modelIn: Float32Array, t: number) => {
    const doubled = new Float32Array(2 * n);
    doubled.set(modelIn, 0);
    doubled.set(modelIn, n);
    const eps = await output("unet", {
      sample: f32(doubled, shape),
      timestep: f32(Float32Array.of(t, t), [2]),
      text_embeds: f32(embeds, [2, embeds.length / 2]),
    });
    return Float64Array.from(
      { length: n },
      (_, i) => eps[i]! + c.guidanceScale * (eps[n + i]! - eps[i]!),
    );
  };
  const sigmaAt = (t: number) => Math.sqrt((1 - acp[t]!) / acp[t]!);
  const sigmas = [...ts.map(sigmaAt), 0];
  const initSigma = c.scheduler === "ddim" ? 1 : Math.max(...sigmas);
  expect(initSigma).toBeCloseTo(c.initNoiseSigma, 6);
  expect(ts).toEqual(c.timesteps);
  let x = seededNoise(c.seed, n).map((v) => v * initSigma);
  for (const [k, t] of ts.entries()) {
    if (c.scheduler === "ddim") {
      const eps = await guided(x, t);
      // diffusers: N // steps
      const prev = t - Math.floor(diffusion.scheduler.numTrainTimesteps / c.steps);
      const aT = acp[t]!;
      const aPrev = prev >= 0 ? acp[prev]! : 1;
      x = x.map((v, i) => {
        const x0 = (v - Math.sqrt(1 - aT) * eps[i]!) / Math.sqrt(aT);
        return Math.sqrt(aPrev) * x0 + Math.sqrt(1 - aPrev) * eps[i]!;
      });
    } else {
      const sigma = sigmas[k]!;
      const eps = await guided(
        x.map((v) => v / Math.sqrt(sigma * sigma + 1)),
        t,
      );
      x = x.map((v, i) => v + eps[i]! * (sigmas[k + 1]! - sigma));
    }
  }
  return output("vae_decoder", {
    latent: f32(
      x.map((v) => v / diffusion.scalingFactor),
      [1, ...diffusion.latentShape],
    ),
  });
}

describe("digit-diffusion loop (ONNX graphs) vs the Python reference", () => {
  for (const c of loops) {
    it(
      `${c.scheduler} ${c.steps} steps, guidance ` +
        `${c.guidanceScale}, "${c.prompt}" seed ${c.seed}`,
      async () => {
        const image = await runLoop(c);
        // measured ≤ 6.3e-5 (the fixture rounds to 1e-4)
        expect(maxDiff(image, c.image)).toBeLessThan(5e-4);
      },
    );
  }
});
