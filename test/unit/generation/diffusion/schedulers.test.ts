// The diffusion loop's pure parts against numbers that can be checked by hand: a constant
// beta schedule (ᾱ_t = 0.9^(t+1)), Stable Diffusion's well-known σ_max = 14.6146, the
// timestep spacings as diffusers lays them out, one DDIM and one Euler step on known inputs,
// guidance, and the seeded noise's specification.
import { describe, expect, it } from "vitest";
import {
  alphasCumprod,
  betas,
  createDenoiser,
  createScheduler,
  eulerSigmas,
  gaussianNoise,
  guide,
  inferenceTimesteps,
  requestNoise,
  type ScheduleConfig,
} from "../../../../src/generation/diffusion";
import { createPrng } from "../../../../src/generation/prng";

const constant: ScheduleConfig = {
  numTrainTimesteps: 10,
  betaSchedule: "linear",
  betaStart: 0.1,
  betaEnd: 0.1,
  predictionType: "epsilon",
};
const sd: ScheduleConfig = {
  numTrainTimesteps: 1000,
  betaSchedule: "scaled_linear",
  betaStart: 0.00085,
  betaEnd: 0.012,
  predictionType: "epsilon",
  stepsOffset: 1,
};

describe("noise schedule", () => {
  it("a constant beta of 0.1 gives ᾱ_t = 0.9^(t+1)", () => {
    const cumprod = alphasCumprod(constant);
    cumprod.forEach((value, t) => expect(value).toBeCloseTo(0.9 ** (t + 1), 12));
  });

  it(
    "scaled_linear: β_0 = 0.00085, β_999 = 0.012, ᾱ_0 " +
      "= 0.99915, and Stable Diffusion's σ_max = 14.6146",
    () => {
      const b = betas(sd);
      expect(b[0]).toBeCloseTo(0.00085, 12);
      expect(b[999]).toBeCloseTo(0.012, 12);
      const cumprod = alphasCumprod(sd);
      expect(cumprod[0]).toBeCloseTo(0.99915, 12);
      const sigmaMax = Math.sqrt((1 - cumprod[999]!) / cumprod[999]!);
      expect(sigmaMax).toBeCloseTo(14.6146, 3);
    },
  );

  it("squaredcos_cap_v2 caps β at 0.999", () => {
    const b = betas({ ...sd, betaSchedule: "squaredcos_cap_v2" });
    expect(b.at(-1)).toBe(0.999);
    expect(b[0]).toBeGreaterThan(0);
  });

  it("timestep spacings as diffusers lays them out", () => {
    expect(inferenceTimesteps(sd, 20, true)).toEqual(
      Array.from({ length: 20 }, (_, i) => 951 - 50 * i),
    );
    expect(inferenceTimesteps({ ...sd, timestepSpacing: "trailing" }, 20, true)).toEqual(
      Array.from({ length: 20 }, (_, i) => 999 - 50 * i),
    );
    expect(inferenceTimesteps({ ...sd, timestepSpacing: "linspace" }, 4, true)).toEqual([
      999, 666, 333, 0,
    ]);
    expect(inferenceTimesteps({ ...sd, timestepSpacing: "linspace" }, 3, false)).toEqual([
      999, 499.5, 0,
    ]);
    // 1000 / 3 = 333.33…: trailing rounds 1000, 666.67, 333.33 then subtracts one.
    expect(inferenceTimesteps({ ...sd, timestepSpacing: "trailing" }, 3, true)).toEqual([
      999, 666, 332,
    ]);
  });
});

describe("DDIM (eta 0)", () => {
  it(
    "one step on known inputs: x̂_0 = (x − sqrt(1−ᾱ_t) " +
      "ε)/sqrt(ᾱ_t), x_prev = sqrt(ᾱ_prev) x̂_0 + sqrt(1−ᾱ_prev) ε",
    () => {
      // 5 steps over 10 timesteps ("leading"): t = 8, 6, 4, 2, 0; the first step goes 8 → 6.
      const ddim = createScheduler("ddim", constant, 5);
      expect(ddim.timesteps).toEqual([8, 6, 4, 2, 0]);
      expect(ddim.initNoiseSigma).toBe(1);
      const [a8, a6] = [0.9 ** 9, 0.9 ** 7];
      const { predOriginal, prevSample } = ddim.step(Float32Array.of(0.5), 0, Float32Array.of(1));
      const x0 = (1 - Math.sqrt(1 - a8) * 0.5) / Math.sqrt(a8);
      expect(predOriginal[0]).toBeCloseTo(x0, 6);
      expect(prevSample[0]).toBeCloseTo(Math.sqrt(a6) * x0 + Math.sqrt(1 - a6) * 0.5, 6);
    },
  );

  it("the last step lands on x̂_0 (set_alpha_to_one)", () => {
    const ddim = createScheduler("ddim", constant, 5);
    const { predOriginal, prevSample } = ddim.step(
      Float32Array.of(0.3, -0.2),
      4,
      Float32Array.of(0.7, 0.1),
    );
    expect(prevSample[0]).toBeCloseTo(predOriginal[0]!, 6);
    expect(prevSample[1]).toBeCloseTo(predOriginal[1]!, 6);
  });

  it("with a perfect noise prediction one step recovers the clean sample exactly", () => {
    const cumprod = alphasCumprod(sd);
    const ddim = createScheduler("ddim", sd, 20);
    const t = ddim.timesteps[0]!;
    const [x0, eps] = [0.42, -1.3];
    const xt = Math.sqrt(cumprod[t]!) * x0 + Math.sqrt(1 - cumprod[t]!) * eps;
    expect(ddim.step(Float32Array.of(eps), 0, Float32Array.of(xt)).predOriginal[0]).toBeCloseTo(
      x0,
      5,
    );
  });
});

describe("Euler discrete", () => {
  it("σ per step is sqrt((1−ᾱ)/ᾱ) at the timestep, interpolated, then 0", () => {
    const sigma = (t: number) => Math.sqrt((1 - 0.9 ** (t + 1)) / 0.9 ** (t + 1));
    const linspace: ScheduleConfig = { ...constant, timestepSpacing: "linspace" };
    // 3 steps over 0..9: t = 9, 4.5, 0 — σ(4.5) is halfway between σ(4) and σ(5).
    expect(eulerSigmas(linspace, [9, 4.5, 0]).map((s) => Number(s.toFixed(9)))).toEqual(
      [sigma(9), (sigma(4) + sigma(5)) / 2, sigma(0), 0].map((s) => Number(s.toFixed(9))),
    );
    const euler = createScheduler("euler", linspace, 3);
    expect(euler.timesteps).toEqual([9, 4.5, 0]);
    expect(euler.initNoiseSigma).toBeCloseTo(sigma(9), 12); // linspace/trailing: σ_max
    expect(createScheduler("euler", constant, 3).initNoiseSigma).toBeCloseTo(
      Math.sqrt(sigma(6) ** 2 + 1),
      12,
    ); // leading: t = 6, 3, 0
  });

  it(
    "Stable Diffusion's schedule, 20 leading steps: " + "σ_0 = σ(951), init sigma = sqrt(σ_0² + 1)",
    () => {
      const euler = createScheduler("euler", sd, 20);
      const cumprod = alphasCumprod(sd);
      const sigma0 = Math.sqrt((1 - cumprod[951]!) / cumprod[951]!);
      expect(euler.initNoiseSigma).toBeCloseTo(Math.sqrt(sigma0 ** 2 + 1), 9);
    },
  );

  it("one step: input scaled by 1/sqrt(σ²+1), x̂_0 = x − σ ε, x_next = x + ε (σ_next − σ)", () => {
    const linspace: ScheduleConfig = { ...constant, timestepSpacing: "linspace" };
    const euler = createScheduler("euler", linspace, 3);
    const sigmas = eulerSigmas(linspace, [9, 4.5, 0]);
    const [s0, s1] = [sigmas[0]!, sigmas[1]!];
    expect(euler.scaleModelInput(Float32Array.of(2), 0)[0]).toBeCloseTo(
      2 / Math.sqrt(s0 * s0 + 1),
      6,
    );
    const { predOriginal, prevSample } = euler.step(Float32Array.of(0.25), 0, Float32Array.of(2));
    expect(predOriginal[0]).toBeCloseTo(2 - s0 * 0.25, 5);
    expect(prevSample[0]).toBeCloseTo(2 + 0.25 * (s1 - s0), 5);
  });
});

describe("guidance and the denoiser", () => {
  it("ε = ε_uncond + g (ε_cond − ε_uncond)", () => {
    expect([...guide(Float32Array.of(1, 2), Float32Array.of(0.5, 4), 3)]).toEqual([2, -2]);
    expect([...guide(Float32Array.of(1, 2), Float32Array.of(0.5, 4), 1)]).toEqual([1, 2]);
  });

  it("a denoiser scales its noise by the init sigma and steps to the end", () => {
    const euler = createDenoiser(
      sd,
      { scheduler: "euler", steps: 4, guidanceScale: 2 },
      Float32Array.of(1, -1),
    );
    const sigma = createScheduler("euler", sd, 4).initNoiseSigma;
    expect(euler.sample()[0]).toBeCloseTo(sigma, 4);
    while (!euler.done) euler.advance(Float32Array.of(0, 0), Float32Array.of(0, 0));
    expect(euler.index).toBe(4);
    expect(() => euler.modelInput()).toThrow();
  });
});

describe("seeded noise (CONTRACTS2.md)", () => {
  it("Box–Muller pairs over createPrng draws, float32, z0 then z1", () => {
    const prng = createPrng(42);
    const expected: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const [u1, u2] = [prng.next(), prng.next()];
      const r = Math.sqrt(-2 * Math.log(1 - u1));
      expected.push(
        Math.fround(r * Math.cos(2 * Math.PI * u2)),
        Math.fround(r * Math.sin(2 * Math.PI * u2)),
      );
    }
    expect([...gaussianNoise(42, 8)]).toEqual(expected);
    // An odd count drops the last z1: the first 7 values are the same.
    expect([...gaussianNoise(42, 7)]).toEqual(expected.slice(0, 7));
  });

  it("is standard normal in bulk and image i of a request uses seed + i", () => {
    const values = gaussianNoise(7, 200_000);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(Math.abs(variance - 1)).toBeLessThan(0.01);
    const batch = requestNoise(100, 3, 196);
    expect([...batch.subarray(196 * 2)]).toEqual([...gaussianNoise(102, 196)]);
  });
});
