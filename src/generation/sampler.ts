// The token sampler both decode loops share — the origin's batched engine and the edge's
// in-isolate loop — so one seed gives the same ids in both places (given the same logits).
// Pure: logits row in, token id out; no onnxruntime, no I/O.
//
// The specification, which both places rely on:
//   PRNG   xoshiro128** (Blackman & Vigna), its 128-bit state filled by SplitMix32 from
//          the seed: for a seed s (a safe integer), lo = s mod 2^32, hi = floor(s / 2^32)
//          mod 2^32; the SplitMix32 state starts at lo ^ mix32(hi) and yields the four
//          state words in order. A uniform draw is (next() >>> 8) / 2^24, in [0, 1).
//   greedy temperature 0 (or topK 1): the largest logit; ties go to the lowest id.
//   sample 1. suppressed ids get -Infinity (min_tokens, before a stop may be sampled);
//          2. z = logit / temperature (float64);
//          3. top-k (k ≥ 1): keep the k largest z, ordered by (z desc, id asc);
//          4. softmax over what is kept;
//          5. top-p (< 1): in (p desc, id asc) order keep the shortest prefix whose sum
//             reaches top_p (at least one id);
//          6. min-p (> 0): keep ids whose p ≥ min_p × the largest p;
//          7. one draw u: walk the kept ids in ascending id order, adding p, and return
//             the first id where the running sum exceeds u × (sum of kept p); the last
//             kept id if rounding leaves none.
//   One draw per sampled token, none for greedy tokens.

/** Sampling parameters as vLLM names them, normalized: topK 0 = off, topP 1 = off, minP 0 = off. */
export interface SamplingParams {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
}

export const GREEDY: SamplingParams = { temperature: 0, topK: 0, topP: 1, minP: 0 };

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

/** xoshiro128** seeded as the header specifies. */
export function createPrng(seed: number): Prng {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  const lo = ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
  const hi = Math.floor(seed / 2 ** 32) >>> 0;
  const fill = splitMix32((lo ^ mix32(hi)) >>> 0);
  const state: [number, number, number, number] = [fill(), fill(), fill(), fill()];
  if (state.every((word) => word === 0)) state[0] = 1; // the all-zero state is xoshiro's only fixed point
  const next = xoshiro128StarStar(state);
  return { next: () => (next() >>> 8) / 2 ** 24 };
}

/** Whether these parameters pick the argmax (no draw is made). */
export function isGreedy(params: SamplingParams): boolean {
  return params.temperature === 0 || params.topK === 1;
}

/** The largest logit's id, the lowest id among equals; suppressed ids never win unless all are. */
export function argmax(logits: ArrayLike<number>, suppressed: ReadonlySet<number> = new Set()): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let id = 0; id < logits.length; id++) {
    const value = logits[id]!;
    if (value > bestValue && !suppressed.has(id)) {
      best = id;
      bestValue = value;
    }
  }
  if (best !== -1) return best;
  return suppressed.size > 0 ? argmax(logits) : 0; // everything suppressed (or NaN)
}

/** Ids ordered by (value desc, id asc). */
function byValueDesc(ids: number[], values: Float64Array): number[] {
  return ids.sort((x, y) => values[y]! - values[x]! || x - y);
}

/** The k largest ids by (value desc, id asc), without sorting the whole vocabulary. */
function topKIds(values: Float64Array, k: number): number[] {
  const candidates: number[] = [];
  for (let id = 0; id < values.length; id++) if (values[id]! > -Infinity) candidates.push(id);
  if (candidates.length <= k) return candidates;
  // Threshold by a sorted copy of the values only: cheaper than sorting ids with a comparator.
  const sorted = Float64Array.from(candidates, (id) => values[id]!).sort();
  const threshold = sorted[sorted.length - k]!;
  const above = candidates.filter((id) => values[id]! > threshold);
  const at = candidates.filter((id) => values[id] === threshold);
  return [...above, ...at.slice(0, k - above.length)];
}

/**
 * Picks the next token from one row of logits (the vocabulary's scores) following the
 * header's specification. `suppressed` ids cannot be picked (unless every id is).
 */
export function sample(logits: ArrayLike<number>, params: SamplingParams, rng: Prng, suppressed: ReadonlySet<number> = new Set()): number {
  if (isGreedy(params)) return argmax(logits, suppressed);
  const vocab = logits.length;
  const z = new Float64Array(vocab);
  for (let id = 0; id < vocab; id++) z[id] = suppressed.has(id) ? -Infinity : logits[id]! / params.temperature;

  let kept = params.topK > 0 && params.topK < vocab ? topKIds(z, params.topK) : [];
  if (kept.length === 0) {
    for (let id = 0; id < vocab; id++) if (z[id]! > -Infinity) kept.push(id);
    if (kept.length === 0) return argmax(logits);
  }

  let max = -Infinity;
  for (const id of kept) max = Math.max(max, z[id]!);
  const p = new Float64Array(vocab);
  let total = 0;
  for (const id of kept) {
    p[id] = Math.exp(z[id]! - max);
    total += p[id]!;
  }
  for (const id of kept) p[id] = p[id]! / total;

  if (params.topP < 1) {
    const ordered = byValueDesc(kept, p);
    let sum = 0;
    let length = 0;
    while (length < ordered.length && (length === 0 || sum < params.topP)) sum += p[ordered[length++]!]!;
    kept = ordered.slice(0, length);
  }
  if (params.minP > 0) {
    let largest = 0;
    for (const id of kept) largest = Math.max(largest, p[id]!);
    kept = kept.filter((id) => p[id]! >= params.minP * largest);
  }

  kept.sort((x, y) => x - y);
  let mass = 0;
  for (const id of kept) mass += p[id]!;
  const target = rng.next() * mass;
  let running = 0;
  for (const id of kept) {
    running += p[id]!;
    if (running > target) return id;
  }
  return kept[kept.length - 1]!;
}
