// The scheduler contract the denoising loop drives. A scheduler is made per image for a step
// count; it is stateless between steps (DDIM with eta 0 and Euler without churn need no
// history), so rows of different requests at different steps can share one UNet batch.

export const SCHEDULERS = ["ddim", "euler"] as const;
export type SchedulerName = (typeof SCHEDULERS)[number];

export interface StepResult {
  /** x_{t−1}: the next step's (unscaled) sample. */
  prevSample: Float32Array;
  /** The predicted clean latent x̂_0 (what previews are drawn from). */
  predOriginal: Float32Array;
}

export interface Scheduler {
  /** The timestep fed to the UNet at each step, highest first. */
  readonly timesteps: readonly number[];
  /** Multiplies the standard normal initial noise (1 for DDIM). */
  readonly initNoiseSigma: number;
  /** The UNet's input at step `index` (Euler divides by sqrt(σ² + 1); DDIM passes it through). */
  scaleModelInput(sample: Float32Array, index: number): Float32Array;
  /** One denoising step from the (guided) epsilon prediction. */
  step(noisePred: Float32Array, index: number, sample: Float32Array): StepResult;
}
