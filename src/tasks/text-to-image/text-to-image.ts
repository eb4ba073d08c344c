// Text to image: the prompt tokenized and the seeded noise drawn at the edge, the loop run by the
// tensor-stream capability, previews and PNGs made here.
import { ServiceError } from "../../errors/service-error";
import { requestNoise, sizeOf, type SchedulerName } from "../../generation/diffusion";
import { encodePng } from "../../images/png";
import type { TextToImageManifest } from "../../models/manifest";
import type { RegisteredModel } from "../registered-model";
import type { TensorStreamCapability } from "../../runtime";
import { modelTokenizer } from "../model-tokenizer";
import { previewPixels, toBytes, upscale } from "./raster";

export interface ImageOptions {
  n: number;
  /** Output width = height, a whole multiple of the model's resolution. */
  size: number;
  steps: number;
  guidanceScale: number;
  scheduler: SchedulerName;
  seed: number;
  /** Previews streamed per image (0–3), at evenly spaced steps. */
  partialImages: number;
}

export type ImageEvent =
  | { type: "partial"; image: number; partialIndex: number; step: number; png: Uint8Array }
  | { type: "image"; image: number; png: Uint8Array };

/** Milliseconds of edge work, for Server-Timing and the benchmark. */
export interface ImageTimings {
  tokenizeMs: number;
  noiseMs: number;
  previewMs: number;
  pngMs: number;
  loopMs: number;
}

/**
 * Image i is drawn from seed + i; the loop (on the origin or in this isolate: the task cannot tell)
 * streams predicted clean latents, then pixels. The consumer leaving aborts the loop behind it.
 */
export interface ImageGenerator {
  readonly manifest: TextToImageManifest;
  /** The model's native side (28 for 28 × 28) and the sizes it serves. */
  readonly resolution: number;
  readonly sizes: readonly number[];
  load(): Promise<void>;
  /** The prompt's ids, right-padded; 400 naming `prompt` when it is too long. */
  prepare(prompt: string): Promise<BigInt64Array>;
  generate(
    ids: BigInt64Array,
    options: ImageOptions,
    signal: AbortSignal,
    timings?: ImageTimings,
  ): AsyncGenerator<ImageEvent>;
}

/** The steps (1-based) whose latents become the p previews: evenly spaced, never the last. */
export function previewSteps(steps: number, partialImages: number): number[] {
  const chosen = new Set<number>();
  for (let j = 0; j < partialImages; j += 1) {
    const step = Math.ceil((steps * (j + 1)) / (partialImages + 1));
    if (step >= 1 && step < steps) chosen.add(step);
  }
  return [...chosen].sort((a, b) => a - b);
}

export const SIZE_MULTIPLES = [1, 2, 4, 8] as const;

export const emptyTimings = (): ImageTimings => ({
  tokenizeMs: 0,
  noiseMs: 0,
  previewMs: 0,
  pngMs: 0,
  loopMs: 0,
});

export function createImageGenerator(
  model: RegisteredModel & { manifest: TextToImageManifest },
): ImageGenerator {
  const { manifest, runtime } = model;
  const spec = manifest.diffusion;
  const [channels, latentHeight, latentWidth] = spec.latentShape;
  const [, height, width] = spec.imageShape;
  const latentSize = sizeOf(spec.latentShape);
  const capability = (): TensorStreamCapability => {
    if (runtime.tensorStream === undefined)
      throw new Error(`Model ${manifest.name}: its runtime offers no tensor stream`);
    return runtime.tensorStream;
  };
  const tokenizer = () => modelTokenizer(model, manifest.tokenizer);
  const png = (
    gray: Uint8Array,
    rows: number,
    columns: number,
    size: number,
    timings: ImageTimings,
  ) => {
    const started = performance.now();
    const bytes = encodePng(upscale(gray, rows, columns, size), size, size);
    timings.pngMs += performance.now() - started;
    return bytes;
  };

  return {
    manifest,
    resolution: height,
    sizes: SIZE_MULTIPLES.map((multiple) => multiple * height),
    async load() {
      await Promise.all([runtime.load(), tokenizer()]);
    },
    async prepare(prompt) {
      const text = manifest.tokenizer.lowercase === true ? prompt.toLowerCase() : prompt;
      const ids = (await tokenizer()).encode(text, {
        addSpecialTokens: false,
        parseSpecialTokens: false,
      });
      if (ids.length > spec.promptLength) {
        throw new ServiceError(
          400,
          "invalid_request",
          `The prompt is ${ids.length} tokens; this model reads at most ${spec.promptLength}`,
          { field: "prompt" },
        );
      }
      const padded = new BigInt64Array(spec.promptLength).fill(BigInt(spec.padTokenId));
      ids.forEach((id, i) => (padded[i] = BigInt(id)));
      return padded;
    },
    async *generate(ids, options, signal, timings = emptyTimings()) {
      const { n } = options;
      const noiseStarted = performance.now();
      const noise = requestNoise(options.seed, n, latentSize);
      timings.noiseMs += performance.now() - noiseStarted;
      const inputIds = new BigInt64Array(n * spec.promptLength);
      for (let i = 0; i < n; i += 1) inputIds.set(ids, i * spec.promptLength);
      const previews = previewSteps(options.steps, options.partialImages);
      const parameters = {
        steps: options.steps,
        guidance_scale: options.guidanceScale,
        scheduler: options.scheduler,
        preview_every: previews.length > 0 ? 1 : 0,
      };
      const feeds = {
        input_ids: { datatype: "INT64" as const, shape: [n, spec.promptLength], data: inputIds },
        noise: { datatype: "FP32" as const, shape: [n, ...spec.latentShape], data: noise },
      };
      const loopStarted = performance.now();
      for await (const step of capability().stream(feeds, { parameters, signal })) {
        const latent = step.outputs.latent;
        if (!step.final && latent?.data instanceof Float32Array) {
          const partialIndex = previews.indexOf(step.step);
          if (partialIndex === -1) continue;
          for (let image = 0; image < n; image += 1) {
            const started = performance.now();
            const pixels = previewPixels(
              latent.data.subarray(image * latentSize, (image + 1) * latentSize),
              channels,
              latentHeight,
              latentWidth,
              spec.preview.factors,
              spec.preview.bias,
            );
            timings.previewMs += performance.now() - started;
            yield {
              type: "partial",
              image,
              partialIndex,
              step: step.step,
              png: png(toBytes(pixels), latentHeight, latentWidth, options.size, timings),
            };
          }
          continue;
        }
        const pixels = step.outputs.image;
        if (
          !step.final ||
          !(pixels?.data instanceof Float32Array) ||
          pixels.data.length !== n * height * width
        ) {
          throw new ServiceError(
            502,
            "upstream_error",
            "The diffusion loop returned no image of the expected shape",
          );
        }
        timings.loopMs += performance.now() - loopStarted;
        for (let image = 0; image < n; image += 1) {
          yield {
            type: "image",
            image,
            png: png(
              toBytes(pixels.data.subarray(image * height * width, (image + 1) * height * width)),
              height,
              width,
              options.size,
              timings,
            ),
          };
        }
        return;
      }
      throw new ServiceError(502, "upstream_error", "The diffusion loop ended without an image");
    },
  };
}
