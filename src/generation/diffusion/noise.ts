// The seeded initial noise, drawn identically at the edge, on the origin and in the Python
// reference that wrote the fixtures.
import { createPrng } from "../prng";

/**
 * `count` standard normal float32 values drawn from `seed`.
 *
 * Uniform draws from createPrng(seed) (xoshiro128** seeded by SplitMix32, u = (next() >>> 8) /
 * 2^24), normals by Box–Muller in float64, pairwise — r = sqrt(−2 ln(1 − u1)), z0 = r cos(2π u2),
 * z1 = r sin(2π u2) — emitted z0 then z1, each rounded to float32, filling the latent in C order
 * (an odd count drops the last z1). Standard normals: the loop scales them by the scheduler's init
 * noise sigma.
 */
export function gaussianNoise(seed: number, count: number): Float32Array {
  const prng = createPrng(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const u1 = prng.next();
    const u2 = prng.next();
    const r = Math.sqrt(-2 * Math.log(1 - u1));
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < count) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

/** The noise of a request for `n` images: image i uses seed + i, one latent after another. */
export function requestNoise(seed: number, n: number, latentSize: number): Float32Array {
  const out = new Float32Array(n * latentSize);
  for (let i = 0; i < n; i += 1) out.set(gaussianNoise(seed + i, latentSize), i * latentSize);
  return out;
}
