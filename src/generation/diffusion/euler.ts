// Euler (the ODE solver of Karras et al., no churn), as diffusers' EulerDiscreteScheduler computes
// it for an epsilon-predicting model.
import { alphasCumprod, inferenceTimesteps, type ScheduleConfig } from "./schedule";
import type { Scheduler } from "./scheduler";

/** σ at a (possibly fractional) timestep: np.interp over the training σ table. */
function interpolate(table: Float64Array, t: number): number {
  const lower = Math.max(0, Math.min(table.length - 1, Math.floor(t)));
  const upper = Math.min(table.length - 1, lower + 1);
  const fraction = Math.min(1, Math.max(0, t - lower));
  return (table[lower] ?? 0) * (1 - fraction) + (table[upper] ?? 0) * fraction;
}

/** The inference sigmas (one per step, then 0) for a schedule and step count. */
export function eulerSigmas(config: ScheduleConfig, timesteps: readonly number[]): number[] {
  const table = alphasCumprod(config).map((alpha) => Math.sqrt((1 - alpha) / alpha));
  return [...timesteps.map((t) => interpolate(table, t)), 0];
}

/**
 *   σ(t) = sqrt((1 − ᾱ_t) / ᾱ_t), linearly interpolated at the inference timesteps, then a final 0
 *   UNet input = x / sqrt(σ² + 1); init noise sigma = σ_max ("linspace", "trailing")
 *     or sqrt(σ_max² + 1)
 *   x̂_0 = x − σ ε;  x_next = x + (x − x̂_0)/σ · (σ_next − σ) = x + ε (σ_next − σ)
 */
export function createEuler(config: ScheduleConfig, steps: number): Scheduler {
  const timesteps = inferenceTimesteps(config, steps, false);
  const sigmas = eulerSigmas(config, timesteps);
  const maxSigma = Math.max(...sigmas);
  const spacing = config.timestepSpacing ?? "leading";
  const initNoiseSigma =
    spacing === "linspace" || spacing === "trailing"
      ? maxSigma
      : Math.sqrt(maxSigma * maxSigma + 1);
  const sigmaAt = (index: number) => {
    const sigma = sigmas[index];
    if (sigma === undefined || index >= steps)
      throw new RangeError(`step ${index} is past the last of ${steps}`);
    return sigma;
  };
  return {
    timesteps,
    initNoiseSigma,
    scaleModelInput(sample, index) {
      const scale = 1 / Math.sqrt(sigmaAt(index) ** 2 + 1);
      return sample.map((value) => value * scale);
    },
    step(noisePred, index, sample) {
      const sigma = sigmaAt(index);
      const dt = (sigmas[index + 1] ?? 0) - sigma;
      const predOriginal = new Float32Array(sample.length);
      const prevSample = new Float32Array(sample.length);
      for (let i = 0; i < sample.length; i += 1) {
        const x = sample[i] ?? 0;
        const x0 = x - sigma * (noisePred[i] ?? 0);
        predOriginal[i] = x0;
        prevSample[i] = x + ((x - x0) / sigma) * dt;
      }
      return { prevSample, predOriginal };
    },
  };
}
