// The diffusion loop's public surface: noise, schedulers, guidance, the denoiser state
// machine, the batched UNet step and the single-request loop.
export { gaussianNoise, requestNoise } from "./noise";
export { alphasCumprod, betas, inferenceTimesteps, type ScheduleConfig } from "./schedule";
export { SCHEDULERS, type Scheduler, type SchedulerName } from "./scheduler";
export { createScheduler } from "./schedulers";
export { eulerSigmas } from "./euler";
export { guide } from "./guidance";
export { createDenoiser, type DenoiseParams, type Denoiser } from "./denoiser";
export { unetStep, type BatchItem, type UnetBatch, type UnetRun } from "./unet-batch";
export {
  attentionMask,
  encodePrompts,
  reportsStep,
  sizeOf,
  unscale,
  type DiffusionGraphs,
  type DiffusionRequest,
  type DiffusionSpec,
} from "./pipeline";
export { diffusionLoop, type DiffusionStep } from "./loop";
export { diffusionGraphs, type RunGraph } from "./graphs";
