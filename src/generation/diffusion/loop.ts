// The whole diffusion loop for one request, all its images batched together each step: encode the
// prompts, denoise, stream each reported step's predicted clean latents, decode.
import type { Tensor } from "../../tensors/tensor";
import { createDenoiser } from "./denoiser";
import {
  encodePrompts,
  reportsStep,
  sizeOf,
  unscale,
  type DiffusionGraphs,
  type DiffusionRequest,
  type DiffusionSpec,
} from "./pipeline";
import { unetStep } from "./unet-batch";

export interface DiffusionStep {
  step: number;
  final: boolean;
  outputs: Record<string, Tensor>;
}

/**
 * Streams `latent` [n, C, H, W] per reported step, then `image` [n, 1, H, W]; checks `signal`
 * between steps.
 *
 * The in-isolate runtime runs it as is; the origin's engine drives the same denoisers but batches
 * rows across requests (origin/engines/diffusion).
 */
export async function* diffusionLoop(
  graphs: DiffusionGraphs,
  spec: DiffusionSpec,
  request: DiffusionRequest,
  signal: AbortSignal,
): AsyncGenerator<DiffusionStep> {
  const latentSize = sizeOf(spec.latentShape);
  const { n, params } = request;
  const { cond, uncond } = await encodePrompts(graphs, spec, request.inputIds, n);
  const items = Array.from({ length: n }, (_, i) => ({
    denoiser: createDenoiser(
      spec.scheduler,
      params,
      request.noise.subarray(i * latentSize, (i + 1) * latentSize),
    ),
    cond: cond[i] ?? uncond,
    uncond,
  }));
  for (let step = 1; step <= params.steps; step += 1) {
    signal.throwIfAborted();
    const predicted = await unetStep(items, latentSize, uncond.length, graphs.unet);
    if (reportsStep(step, params.steps, request.previewEvery)) {
      const data = new Float32Array(n * latentSize);
      predicted.forEach((latent, i) => data.set(latent, i * latentSize));
      yield {
        step,
        final: false,
        outputs: { latent: { datatype: "FP32", shape: [n, ...spec.latentShape], data } },
      };
    }
  }
  signal.throwIfAborted();
  const latents = new Float32Array(n * latentSize);
  items.forEach((item, i) => latents.set(item.denoiser.sample(), i * latentSize));
  const image = await graphs.decode(unscale(latents, spec.scalingFactor), n);
  yield {
    step: params.steps,
    final: true,
    outputs: { image: { datatype: "FP32", shape: [n, ...spec.imageShape], data: image } },
  };
}
