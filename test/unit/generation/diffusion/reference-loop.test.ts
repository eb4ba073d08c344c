// The service's diffusion loop (src/generation/diffusion: noise, schedulers, guidance, the
// loop itself) against the diffusion helper's Python reference loop
// (test/fixtures/digit-diffusion/loops.json, written by scripts/diffusion/evaluate.py on the
// FP32 modules): prompt ids from the edge tokenizer, the first noise values, the timesteps and
// init sigma, every step's predicted clean latent and the final image, run over the shipped
// ONNX graphs with onnxruntime-node. Skipped until models/digit-diffusion is merged.
import { existsSync, readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createScheduler,
  diffusionGraphs,
  diffusionLoop,
  gaussianNoise,
  type RunGraph,
} from "../../../../src/generation/diffusion";
import { TextToImageSchema } from "../../../../src/models/manifest";
import type { DataType, Tensor } from "../../../../src/tensors/tensor";
import { loadTextTokenizer } from "../../../../src/tokenizers/load";

const dir = "models/digit-diffusion";
const fixtureFile = "test/fixtures/digit-diffusion/loops.json";
const present = existsSync(`${dir}/manifest.json`) && existsSync(fixtureFile);

const LoopCase = z.object({
  prompt: z.string(),
  ids: z.array(z.number().int()),
  inputIds: z.array(z.number().int()),
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

const TYPES: Partial<Record<DataType, "int64" | "float32">> = { INT64: "int64", FP32: "float32" };

async function runner(file: string): Promise<RunGraph> {
  const session = await ort.InferenceSession.create(readFileSync(`${dir}/${file}`));
  return async (feeds) => {
    const ortFeeds = Object.fromEntries(
      Object.entries(feeds).map(([name, tensor]) => [
        name,
        new ort.Tensor(
          TYPES[tensor.datatype] ?? "float32",
          tensor.data as Float32Array | BigInt64Array,
          tensor.shape,
        ),
      ]),
    );
    const results = await session.run(ortFeeds);
    return Object.fromEntries(
      Object.entries(results).map(([name, tensor]): [string, Tensor] => [
        name,
        {
          datatype: "FP32",
          shape: [...tensor.dims],
          data: Float32Array.from(tensor.data as Float32Array),
        },
      ]),
    );
  };
}

describe.skipIf(!present)(
  "the TS diffusion loop vs the Python reference loop (digit-diffusion fixtures)",
  () => {
    const manifest = present
      ? TextToImageSchema.parse(JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")))
      : undefined;
    const cases = present
      ? z
          .object({ cases: z.array(LoopCase).min(1) })
          .parse(JSON.parse(readFileSync(fixtureFile, "utf8"))).cases
      : [];

    it("ids, noise, timesteps and init sigma match the reference exactly", async () => {
      const spec = manifest!.diffusion;
      const tokenizer = loadTextTokenizer(
        "tokenizer.json",
        readFileSync(`${dir}/${manifest!.tokenizer.file}`),
      );
      for (const fixture of cases) {
        const text =
          manifest!.tokenizer.lowercase === true ? fixture.prompt.toLowerCase() : fixture.prompt;
        expect(
          tokenizer.encode(text, { addSpecialTokens: false, parseSpecialTokens: false }),
          fixture.prompt,
        ).toEqual(fixture.ids);
        expect([...gaussianNoise(fixture.seed, 8)]).toEqual(fixture.noiseFirst8.map(Math.fround));
        const scheduler = createScheduler(fixture.scheduler, spec.scheduler, fixture.steps);
        expect(scheduler.timesteps).toEqual(fixture.timesteps);
        expect(scheduler.initNoiseSigma).toBeCloseTo(fixture.initNoiseSigma, 3);
      }
    });

    it("every step's predicted clean latent and the final image " +
      "match (image within 2e-4: the fixture is rounded to 1e-4)", {
      timeout: 120_000,
    }, async () => {
      const { defaults, ...spec } = manifest!.diffusion;
      void defaults;
      const graphs = diffusionGraphs(spec, {
        textEncoder: await runner("text_encoder.onnx"),
        unet: await runner("unet.onnx"),
        vaeDecoder: await runner("vae_decoder.onnx"),
      });
      const latentSize = spec.latentShape.reduce((a, b) => a * b, 1);
      for (const fixture of cases) {
        const request = {
          inputIds: BigInt64Array.from(fixture.inputIds, BigInt),
          noise: gaussianNoise(fixture.seed, latentSize),
          n: 1,
          params: {
            scheduler: fixture.scheduler,
            steps: fixture.steps,
            guidanceScale: fixture.guidanceScale,
          },
          previewEvery: 1,
        };
        const latents: number[][] = [];
        let image: Float32Array | undefined;
        for await (const step of diffusionLoop(
          graphs,
          spec,
          request,
          new AbortController().signal,
        )) {
          const latent = step.outputs.latent?.data;
          if (latent instanceof Float32Array) latents.push(Array.from(latent.subarray(0, 4)));
          const pixels = step.outputs.image?.data;
          if (pixels instanceof Float32Array) image = pixels;
        }
        expect(latents).toHaveLength(fixture.steps);
        // The first 4 values (C order) of each step's x̂_0, relative to their magnitude.
        fixture.predictedLatentFirst4.forEach((expected, step) => {
          const scale = Math.max(1, ...expected.map(Math.abs));
          const got = latents[step]!;
          const worst = Math.max(...expected.map((value, i) => Math.abs(value - (got[i] ?? NaN))));
          expect(
            worst / scale,
            `${fixture.prompt} step ${step + 1}: ${got} vs ${expected}`,
          ).toBeLessThan(5e-3);
        });
        const worst = Math.max(
          ...fixture.image.map((value, i) => Math.abs(value - (image?.[i] ?? NaN))),
        );
        console.log(
          `${fixture.prompt} (${fixture.scheduler}, ${fixture.steps} ` +
            `steps): max |Δ| image ${worst.toExponential(2)}`,
        );
        expect(worst, fixture.prompt).toBeLessThan(2e-4);
      }
    });
  },
);
