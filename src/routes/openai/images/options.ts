// From a validated request to the task's options: the model's defaults where a field is
// absent, the size checked against what the model serves, a random seed when none is given.
import { ServiceError } from "../../../errors/service-error";
import type { SchedulerName } from "../../../generation/diffusion";
import type { ImageGenerator, ImageOptions } from "../../../tasks/text-to-image/text-to-image";

export interface ImageFields {
  n?: number | null | undefined;
  size?: string | null | undefined;
  steps?: number | null | undefined;
  guidanceScale?: number | null | undefined;
  scheduler?: SchedulerName | null | undefined;
  seed?: number | null | undefined;
  partialImages?: number | null | undefined;
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0] ?? 0;
}

/** The square side in pixels of a "WxH" size, or a 400 naming `field`. */
export function sizeOf(
  generator: ImageGenerator,
  size: string | null | undefined,
  field: string,
): number {
  if (size === undefined || size === null || size === "auto") return generator.resolution;
  const match = /^(\d+)x(\d+)$/.exec(size);
  const side = match === null || match[1] !== match[2] ? undefined : Number(match[1]);
  if (side === undefined || !generator.sizes.includes(side)) {
    throw new ServiceError(
      400,
      "invalid_request",
      `size must be one of ${generator.sizes.map((s) => `${s}x${s}`).join(", ")}`,
      { field },
    );
  }
  return side;
}

export function imageOptions(
  generator: ImageGenerator,
  fields: ImageFields,
  sizeField = "size",
): ImageOptions {
  const defaults = generator.manifest.diffusion.defaults;
  return {
    n: fields.n ?? 1,
    size: sizeOf(generator, fields.size, sizeField),
    steps: fields.steps ?? defaults.steps,
    guidanceScale: fields.guidanceScale ?? defaults.guidanceScale,
    scheduler: fields.scheduler ?? defaults.scheduler,
    seed: fields.seed ?? randomSeed(),
    partialImages: fields.partialImages ?? 0,
  };
}
