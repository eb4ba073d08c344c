// The seeded PRNG behind sampling and diffusion noise: xoshiro128** seeded by SplitMix32, so one
// seed gives the same draws at the edge and on the origin.

/** A seeded stream of uniform draws in [0, 1). */
export interface Prng {
  next(): number;
}

function mix32(value: number): number {
  let z = value >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

/** SplitMix32: a Weyl sequence (step 0x9e3779b9) through mix32. */
function splitMix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    return mix32(state);
  };
}

const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0;

/** xoshiro128** from a given state: raw 32-bit outputs (exported for its reference test). */
export function xoshiro128StarStar(state: readonly [number, number, number, number]): () => number {
  let [a, b, c, d] = [state[0] >>> 0, state[1] >>> 0, state[2] >>> 0, state[3] >>> 0];
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c = (c ^ a) >>> 0;
    d = (d ^ b) >>> 0;
    b = (b ^ c) >>> 0;
    a = (a ^ d) >>> 0;
    c = (c ^ t) >>> 0;
    d = rotl(d, 11);
    return result;
  };
}

/**
 * xoshiro128** (Blackman & Vigna), its 128-bit state filled by SplitMix32 from the seed: for a
 * seed s (a safe integer), lo = s mod 2^32, hi = floor(s / 2^32) mod 2^32; the SplitMix32 state
 * starts at lo ^ mix32(hi) and yields the four state words in order. A uniform draw is
 * (next() >>> 8) / 2^24, in [0, 1).
 */
export function createPrng(seed: number): Prng {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  const lo = ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
  const hi = Math.floor(seed / 2 ** 32) >>> 0;
  const fill = splitMix32((lo ^ mix32(hi)) >>> 0);
  const state: [number, number, number, number] = [fill(), fill(), fill(), fill()];
  // the all-zero state is xoshiro's only fixed point
  if (state.every((word) => word === 0)) state[0] = 1;
  const next = xoshiro128StarStar(state);
  return { next: () => (next() >>> 8) / 2 ** 24 };
}
