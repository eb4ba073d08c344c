// The text-to-image pipeline around the denoisers: prompt masks, the text encoder, latent scaling
// and which steps a stream reports; pure over three graph functions.
import type { DenoiseParams } from "./denoiser";
import type { ScheduleConfig } from "./schedule";
import type { UnetRun } from "./unet-batch";

/** The manifest's `diffusion` block, as the loop needs it. */
export interface DiffusionSpec {
  promptLength: number;
  padTokenId: number;
  latentShape: readonly number[];
  imageShape: readonly number[];
  scalingFactor: number;
  scheduler: ScheduleConfig;
}

/**
 * The three graphs as functions over flat arrays (rows first).
 *
 * The prompt ids' attention mask and the empty prompt (classifier-free guidance's unconditional
 * input) are made here. Pure over these functions, so the origin (onnxruntime-node) and the isolate
 * (onnxruntime-web) share the pipeline.
 */
export interface DiffusionGraphs {
  /** input_ids, attention_mask INT64 [rows, L] → text_embeds FP32 [rows, E]. */
  encodeText(
    inputIds: BigInt64Array,
    attentionMask: BigInt64Array,
    rows: number,
  ): Promise<Float32Array>;
  unet: UnetRun;
  /**
   * latent FP32 [rows, C, H, W] (already divided by the scaling factor) → image FP32 [rows, 1, 28,
   * 28].
   */
  decode(latent: Float32Array, rows: number): Promise<Float32Array>;
}

export interface DiffusionRequest {
  /** [n, promptLength] right-padded with the pad id. */
  inputIds: BigInt64Array;
  /** [n, C, H, W] standard normal noise (the seeded generator's, image i from seed + i). */
  noise: Float32Array;
  n: number;
  params: DenoiseParams;
  /** Report the predicted clean latent every this many steps (0: never). */
  previewEvery: number;
}

export const sizeOf = (shape: readonly number[]) => shape.reduce((total, dim) => total * dim, 1);

/** The attention mask of right-padded ids: 1 where the id is not the pad id. */
export function attentionMask(inputIds: BigInt64Array, padTokenId: number): BigInt64Array {
  const pad = BigInt(padTokenId);
  return inputIds.map((id) => (id === pad ? 0n : 1n));
}

/**
 * Encodes the n prompts and the empty prompt in one run: [n prompts' embeddings, the null
 * embedding].
 */
export async function encodePrompts(
  graphs: DiffusionGraphs,
  spec: DiffusionSpec,
  inputIds: BigInt64Array,
  n: number,
): Promise<{ cond: Float32Array[]; uncond: Float32Array }> {
  const length = spec.promptLength;
  const ids = new BigInt64Array((n + 1) * length).fill(BigInt(spec.padTokenId));
  ids.set(inputIds.subarray(0, n * length));
  const embeds = await graphs.encodeText(ids, attentionMask(ids, spec.padTokenId), n + 1);
  const size = embeds.length / (n + 1);
  const row = (i: number) => embeds.slice(i * size, (i + 1) * size);
  return { cond: Array.from({ length: n }, (_, i) => row(i)), uncond: row(n) };
}

/** Final latents (scaled) → the VAE's input (divided by the scaling factor). */
export function unscale(latents: Float32Array, scalingFactor: number): Float32Array {
  return scalingFactor === 1 ? latents : latents.map((value) => value / scalingFactor);
}

/** Whether step k (1-based, after it ran) is reported: every `every` steps and always the last. */
export function reportsStep(step: number, steps: number, every: number): boolean {
  return every > 0 && (step % every === 0 || step === steps);
}
