// The noise schedule both schedulers share, as diffusers builds it: betas, alphas_cumprod and the
// inference timesteps, in float64.

export type BetaSchedule = "linear" | "scaled_linear" | "squaredcos_cap_v2";
export type TimestepSpacing = "leading" | "trailing" | "linspace";

export interface ScheduleConfig {
  numTrainTimesteps: number;
  betaSchedule: BetaSchedule;
  betaStart: number;
  betaEnd: number;
  predictionType: "epsilon";
  /** diffusers' timestep_spacing (default "leading", as DDIMScheduler's). */
  timestepSpacing?: TimestepSpacing;
  /** diffusers' steps_offset (added to "leading" timesteps; default 0). */
  stepsOffset?: number;
  /**
   * DDIM's clip_sample (clamp the predicted clean sample to ±1); default false, as latent pipelines
   * set it.
   */
  clipSample?: boolean;
  /**
   * DDIM's set_alpha_to_one (the last step's alpha_cumprod_prev is 1, else alphas_cumprod[0]);
   * default true.
   */
  setAlphaToOne?: boolean;
}

function linspace(start: number, end: number, count: number): number[] {
  if (count === 1) return [start];
  return Array.from({ length: count }, (_, i) => start + ((end - start) * i) / (count - 1));
}

/** betas_for_alpha_bar with the cosine alpha_bar (t + 0.008) / 1.008 · π/2, capped at 0.999. */
function cosineBetas(count: number): number[] {
  const alphaBar = (t: number) => Math.cos(((t + 0.008) / 1.008) * (Math.PI / 2)) ** 2;
  return Array.from({ length: count }, (_, i) =>
    Math.min(1 - alphaBar((i + 1) / count) / alphaBar(i / count), 0.999),
  );
}

export function betas(config: ScheduleConfig): number[] {
  const { numTrainTimesteps: n, betaStart, betaEnd } = config;
  switch (config.betaSchedule) {
    case "linear":
      return linspace(betaStart, betaEnd, n);
    case "scaled_linear":
      return linspace(Math.sqrt(betaStart), Math.sqrt(betaEnd), n).map((b) => b * b);
    case "squaredcos_cap_v2":
      return cosineBetas(n);
    default: {
      const unknown: never = config.betaSchedule;
      throw new Error(`unknown beta schedule ${String(unknown)}`);
    }
  }
}

/** ᾱ_t = Π_{s ≤ t} (1 − β_s), for t = 0 … numTrainTimesteps − 1. */
export function alphasCumprod(config: ScheduleConfig): Float64Array {
  const out = new Float64Array(config.numTrainTimesteps);
  let product = 1;
  betas(config).forEach((beta, t) => {
    product *= 1 - beta;
    out[t] = product;
  });
  return out;
}

/** The inference timesteps, highest first, per timestep_spacing (integers for DDIM; Euler's
 * "linspace" keeps the fractional ones, `integer: false`).
 *
 * Float64 throughout, where diffusers keeps these in float32: differences stay below 1e-6 relative.
 */
export function inferenceTimesteps(
  config: ScheduleConfig,
  steps: number,
  integer: boolean,
): number[] {
  const n = config.numTrainTimesteps;
  const spacing = config.timestepSpacing ?? "leading";
  switch (spacing) {
    case "leading": {
      const ratio = Math.floor(n / steps);
      return Array.from(
        { length: steps },
        (_, i) => Math.round((steps - 1 - i) * ratio) + (config.stepsOffset ?? 0),
      );
    }
    case "trailing": {
      const ratio = n / steps;
      return Array.from({ length: steps }, (_, i) => roundHalfEven(n - i * ratio) - 1);
    }
    case "linspace": {
      const points = linspace(0, n - 1, steps).reverse();
      return integer ? points.map(roundHalfEven) : points;
    }
    default: {
      const unknown: never = spacing;
      throw new Error(`unknown timestep spacing ${String(unknown)}`);
    }
  }
}

/** numpy's round: halves go to the even neighbour. */
export function roundHalfEven(value: number): number {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
