// One image's denoising loop as a state machine: it says what UNet rows its next step needs and
// takes the predictions back, so whoever drives it owns the batching.
import { guide } from "./guidance";
import type { Scheduler, SchedulerName } from "./scheduler";
import { createScheduler } from "./schedulers";
import type { ScheduleConfig } from "./schedule";

export interface DenoiseParams {
  scheduler: SchedulerName;
  steps: number;
  guidanceScale: number;
}

/**
 * Its next step needs the scaled sample at its timestep, conditional and unconditional. The loop
 * that drives it owns the batching: the origin packs rows of every active request into one UNet
 * run, the in-isolate loop the rows of one request.
 */
export interface Denoiser {
  readonly steps: number;
  /** Steps done so far. */
  readonly index: number;
  readonly done: boolean;
  /** The UNet input of the next step. */
  modelInput(): { sample: Float32Array; timestep: number };
  /** Takes the next step's conditional and unconditional predictions; returns x̂_0. */
  advance(cond: Float32Array, uncond: Float32Array): Float32Array;
  /** The current sample: the final (scaled) latent once done. */
  sample(): Float32Array;
}

/** A denoiser starting from standard normal `noise` (scaled here by the init noise sigma). */
export function createDenoiser(
  config: ScheduleConfig,
  params: DenoiseParams,
  noise: Float32Array,
): Denoiser {
  const scheduler: Scheduler = createScheduler(params.scheduler, config, params.steps);
  let sample: Float32Array = noise.map((value) => value * scheduler.initNoiseSigma);
  let index = 0;
  return {
    steps: params.steps,
    get index() {
      return index;
    },
    get done() {
      return index >= params.steps;
    },
    modelInput() {
      const timestep = scheduler.timesteps[index];
      if (timestep === undefined) throw new RangeError("the denoiser is done");
      return { sample: scheduler.scaleModelInput(sample, index), timestep };
    },
    advance(cond, uncond) {
      const { prevSample, predOriginal } = scheduler.step(
        guide(cond, uncond, params.guidanceScale),
        index,
        sample,
      );
      sample = prevSample;
      index += 1;
      return predOriginal;
    },
    sample: () => sample,
  };
}
