// One UNet run for many denoisers: each contributes a conditional and an unconditional row
// (timestep per row, so images at different steps share the run); the predictions go back
// to each denoiser, which steps. Used by the origin's batching engine and the isolate's loop.
import type { Denoiser } from "./denoiser";

export interface UnetBatch {
  /** [rows, C, H, W] scaled samples. */
  sample: Float32Array;
  /** [rows] timesteps. */
  timestep: Float32Array;
  /** [rows, E] text embeddings. */
  textEmbeds: Float32Array;
  rows: number;
}

/** Runs the UNet on a batch; returns noise_pred [rows, C, H, W]. */
export type UnetRun = (batch: UnetBatch) => Promise<Float32Array>;

export interface BatchItem {
  denoiser: Denoiser;
  /** The prompt's embedding [E] and the empty prompt's [E]. */
  cond: Float32Array;
  uncond: Float32Array;
}

/** Steps every item once through one UNet run; returns each item's predicted clean latent. */
export async function unetStep(
  items: readonly BatchItem[],
  latentSize: number,
  embedSize: number,
  unet: UnetRun,
): Promise<Float32Array[]> {
  const rows = items.length * 2;
  const sample = new Float32Array(rows * latentSize);
  const timestep = new Float32Array(rows);
  const textEmbeds = new Float32Array(rows * embedSize);
  items.forEach((item, i) => {
    const input = item.denoiser.modelInput();
    for (const [row, embeds] of [
      [i, item.cond],
      [items.length + i, item.uncond],
    ] as const) {
      sample.set(input.sample, row * latentSize);
      timestep[row] = input.timestep;
      textEmbeds.set(embeds, row * embedSize);
    }
  });
  const noisePred = await unet({ sample, timestep, textEmbeds, rows });
  if (noisePred.length !== rows * latentSize)
    throw new Error(
      `the UNet returned ${noisePred.length} values for ${rows} rows of ${latentSize}`,
    );
  return items.map((item, i) =>
    item.denoiser.advance(
      noisePred.subarray(i * latentSize, (i + 1) * latentSize),
      noisePred.subarray((items.length + i) * latentSize, (items.length + i + 1) * latentSize),
    ),
  );
}
