// DDIM with eta 0 (deterministic), as diffusers' DDIMScheduler.step computes it for an
// epsilon-predicting model.
import { alphasCumprod, inferenceTimesteps, type ScheduleConfig } from "./schedule";
import type { Scheduler } from "./scheduler";

/**
 *   prev_t = t − numTrainTimesteps // steps
 *   x̂_0 = (x_t − sqrt(1 − ᾱ_t) ε) / sqrt(ᾱ_t)       (clamped to ±1 with clip_sample)
 *   x_{prev} = sqrt(ᾱ_prev) x̂_0 + sqrt(1 − ᾱ_prev) ε  (ᾱ_prev = 1 or ᾱ_0 past the start)
 */
export function createDdim(config: ScheduleConfig, steps: number): Scheduler {
  const cumprod = alphasCumprod(config);
  const finalAlpha = (config.setAlphaToOne ?? true) ? 1 : (cumprod[0] ?? 1);
  const timesteps = inferenceTimesteps(config, steps, true);
  const stride = Math.floor(config.numTrainTimesteps / steps);
  const clip = config.clipSample ?? false;
  return {
    timesteps,
    initNoiseSigma: 1,
    scaleModelInput: (sample) => sample,
    step(noisePred, index, sample) {
      const t = timesteps[index];
      if (t === undefined) throw new RangeError(`step ${index} is past the last of ${steps}`);
      const prev = t - stride;
      const alpha = cumprod[t] ?? 1;
      const alphaPrev = prev >= 0 ? (cumprod[prev] ?? 1) : finalAlpha;
      const [sqrtAlpha, sqrtBeta] = [Math.sqrt(alpha), Math.sqrt(1 - alpha)];
      const [sqrtAlphaPrev, sqrtBetaPrev] = [Math.sqrt(alphaPrev), Math.sqrt(1 - alphaPrev)];
      const predOriginal = new Float32Array(sample.length);
      const prevSample = new Float32Array(sample.length);
      for (let i = 0; i < sample.length; i += 1) {
        const eps = noisePred[i] ?? 0;
        let x0 = ((sample[i] ?? 0) - sqrtBeta * eps) / sqrtAlpha;
        if (clip) x0 = Math.min(1, Math.max(-1, x0));
        predOriginal[i] = x0;
        prevSample[i] = sqrtAlphaPrev * x0 + sqrtBetaPrev * eps;
      }
      return { prevSample, predOriginal };
    },
  };
}
