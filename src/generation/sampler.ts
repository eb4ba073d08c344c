// The token sampler both decode loops share (the origin's batched engine and the edge's in-isolate
// loop), so one seed gives the same ids in both places. Pure: logits row in, token id out.

/** Sampling parameters as vLLM names them, normalized: topK 0 = off, topP 1 = off, minP 0 = off. */
export interface SamplingParams {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  /** OpenAI's presence_penalty, in [-2, 2] (absent or 0 = off). */
  presencePenalty?: number;
  /** OpenAI's frequency_penalty, in [-2, 2] (absent or 0 = off). */
  frequencyPenalty?: number;
  /** vLLM's repetition_penalty, > 0 (absent or 1 = off). */
  repetitionPenalty?: number;
  /** OpenAI's logit_bias as [token id, bias] pairs, bias in [-100, 100] (absent or empty = off). */
  logitBias?: ReadonlyArray<readonly [number, number]>;
  /** vLLM's allowed_token_ids: only these ids can be sampled (absent = all; never empty). */
  allowedTokenIds?: readonly number[];
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
  if (state.every((word) => word === 0)) state[0] = 1; // the all-zero state is xoshiro's only fixed point
  const next = xoshiro128StarStar(state);
  return { next: () => (next() >>> 8) / 2 ** 24 };
}

/** Whether any penalty is set: then the sampler needs the request's TokenHistory. */
export function hasPenalties(params: SamplingParams): boolean {
  return (
    (params.presencePenalty ?? 0) !== 0 ||
    (params.frequencyPenalty ?? 0) !== 0 ||
    (params.repetitionPenalty ?? 1) !== 1
  );
}

/** What the penalties read: which ids the prompt holds and how often each was generated. */
export class TokenHistory {
  private readonly prompt: ReadonlySet<number>;
  /** Generated ids and their counts, in the order first generated. */
  readonly counts = new Map<number, number>();

  constructor(promptIds: Iterable<number>) {
    this.prompt = new Set(promptIds);
  }

  /** Records a generated id. */
  add(id: number): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }

  /** The ids the repetition penalty reaches: the prompt's and the generated ones. */
  *seen(): Iterable<number> {
    yield* this.prompt;
    for (const id of this.counts.keys()) if (!this.prompt.has(id)) yield id;
  }
}

/**
 * The logits adjusted as below (a float64 copy): the allowed ids, the logit bias,
 * then the penalties when a history is given; the same logits when there is nothing to apply.
 *
 * Applied first, on a float64 copy of the logits (when any of these is set), in vLLM's order (its
 * logit-bias processor, then apply_penalties; before temperature, greedy included):
 *   0. allowed ids: every id a structured output's mask (this step's, vLLM's grammar bitmask) or
 *      vLLM's allowed_token_ids leaves out gets -Infinity;
 *   0'. logit bias: each listed id's bias is added to its logit;
 *   penalties (with the request's history):
 *   a. repetition (≠ 1): each id in the prompt or generated so far: a logit > 0 is multiplied by
 *      1 / penalty, any other by the penalty (CTRL's; the prompt counts);
 *   b. frequency and presence: each id generated so far (the prompt does not count) loses
 *      frequency × its count, then presence once (OpenAI's definition).
 */
export function adjustLogits(
  logits: ArrayLike<number>,
  params: SamplingParams,
  history?: TokenHistory,
  mask?: Uint8Array,
): ArrayLike<number> {
  const bias = params.logitBias ?? [];
  const penalties = history !== undefined && hasPenalties(params);
  const allowed = params.allowedTokenIds;
  if (bias.length === 0 && !penalties && allowed === undefined && mask === undefined) return logits;
  let out: Float64Array;
  if (allowed === undefined) out = Float64Array.from(logits);
  else {
    out = new Float64Array(logits.length).fill(-Infinity);
    for (const id of allowed) if (id >= 0 && id < out.length) out[id] = logits[id]!;
  }
  if (mask !== undefined)
    for (let id = 0; id < out.length; id++) if (mask[id] !== 1) out[id] = -Infinity;
  for (const [id, value] of bias) if (id >= 0 && id < out.length) out[id] = out[id]! + value;
  if (penalties) penalize(out, params, history);
  return out;
}

/** The penalties, in place. */
function penalize(out: Float64Array, params: SamplingParams, history: TokenHistory): void {
  const repetition = params.repetitionPenalty ?? 1;
  if (repetition !== 1) {
    const [above, below] = [1 / repetition, repetition];
    for (const id of history.seen())
      if (id >= 0 && id < out.length) out[id] = out[id]! * (out[id]! > 0 ? above : below);
  }
  const [frequency, presence] = [params.frequencyPenalty ?? 0, params.presencePenalty ?? 0];
  if (frequency !== 0 || presence !== 0) {
    for (const [id, count] of history.counts)
      if (id >= 0 && id < out.length) out[id] = out[id]! - frequency * count - presence;
  }
}

/** Whether these parameters pick the argmax (no draw is made). */
export function isGreedy(params: SamplingParams): boolean {
  return params.temperature === 0 || params.topK === 1;
}

/**
 * The largest logit's id, the lowest id among equals; suppressed ids never win unless all are.
 *
 * Greedy (temperature 0, or topK 1): the largest logit; ties go to the lowest id.
 */
export function argmax(
  logits: ArrayLike<number>,
  suppressed: ReadonlySet<number> = new Set(),
): number {
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

/**
 * Keeps, among the ids `keep` marks, the first `count` in (value desc, id asc) order: all
 * above the cut-off value, then the lowest ids at it. The cut-off comes from a numeric
 * (typed-array) sort of the values, so no comparator runs over the vocabulary.
 */
function keepLeading(keep: Uint8Array, values: Float64Array, count: number, cutoff: number): void {
  let room = count;
  for (let id = 0; id < keep.length; id++) if (keep[id] === 1 && values[id]! > cutoff) room--;
  for (let id = 0; id < keep.length; id++) {
    if (keep[id] !== 1 || values[id]! > cutoff) continue;
    if (values[id] === cutoff && room > 0) room--;
    else keep[id] = 0;
  }
}

/** The values of the kept ids, sorted ascending. */
function sortedKept(keep: Uint8Array, values: Float64Array, kept: number): Float64Array {
  const out = new Float64Array(kept);
  let n = 0;
  for (let id = 0; id < keep.length; id++) if (keep[id] === 1) out[n++] = values[id]!;
  return out.sort();
}

/**
 * Picks the next token from one row of logits (the vocabulary's scores) following the
 * specification below, which both decode loops rely on. `suppressed` ids cannot be picked
 * (unless every id is). Sums (the softmax's total, the kept mass) run in ascending id order.
 * `history` (the request's prompt and generated ids) is what the penalties read; without it none
 * is applied (the logit bias still is). `mask`, this step's structured-output mask, keeps only
 * the ids set to 1 in it (the caller ends the output instead of sampling where it keeps none).
 *
 * After adjustLogits, in order:
 *   1. suppressed ids get -Infinity (min_tokens, before a stop may be sampled);
 *   2. z = logit / temperature (float64);
 *   3. top-k (k ≥ 1): keep the k largest z, ordered by (z desc, id asc);
 *   4. softmax over what is kept (its total summed in ascending id order);
 *   5. top-p (< 1): in (p desc, id asc) order keep the shortest prefix whose sum reaches top_p
 *      (at least one id);
 *   6. min-p (> 0): keep ids whose p ≥ min_p × the largest p;
 *   7. one draw u: walk the kept ids in ascending id order, adding p, and return the first id
 *      where the running sum exceeds u × (sum of kept p, in ascending id order); the last kept
 *      id if rounding leaves none.
 * One draw per sampled token, none for greedy tokens.
 */
export function sample(
  raw: ArrayLike<number>,
  params: SamplingParams,
  rng: Prng,
  suppressed: ReadonlySet<number> = new Set(),
  history?: TokenHistory,
  mask?: Uint8Array,
): number {
  const logits = adjustLogits(raw, params, history, mask);
  if (isGreedy(params)) return argmax(logits, suppressed);
  const vocab = logits.length;
  const z = new Float64Array(vocab);
  const keep = new Uint8Array(vocab);
  let kept = 0;
  for (let id = 0; id < vocab; id++) {
    z[id] = suppressed.has(id) ? -Infinity : logits[id]! / params.temperature;
    if (z[id]! > -Infinity) {
      keep[id] = 1;
      kept++;
    }
  }
  if (kept === 0) return argmax(logits);
  if (params.topK > 0 && params.topK < kept) {
    const sorted = sortedKept(keep, z, kept);
    keepLeading(keep, z, params.topK, sorted[kept - params.topK]!);
    kept = params.topK;
  }

  let max = -Infinity;
  for (let id = 0; id < vocab; id++) if (keep[id] === 1 && z[id]! > max) max = z[id]!;
  const p = new Float64Array(vocab);
  let total = 0;
  for (let id = 0; id < vocab; id++) {
    if (keep[id] !== 1) continue;
    p[id] = Math.exp(z[id]! - max);
    total += p[id]!;
  }
  for (let id = 0; id < vocab; id++) if (keep[id] === 1) p[id] = p[id]! / total;

  if (params.topP < 1) {
    // The shortest (p desc, id asc) prefix reaching top_p, summed over the sorted values:
    // the same numbers added in the same order as walking that prefix.
    const sorted = sortedKept(keep, p, kept);
    let sum = 0;
    let length = 0;
    while (length < kept && (length === 0 || sum < params.topP))
      sum += sorted[kept - 1 - length++]!;
    keepLeading(keep, p, length, sorted[kept - length]!);
    kept = length;
  }
  if (params.minP > 0) {
    let largest = 0;
    for (let id = 0; id < vocab; id++) if (keep[id] === 1 && p[id]! > largest) largest = p[id]!;
    for (let id = 0; id < vocab; id++)
      if (keep[id] === 1 && p[id]! < params.minP * largest) keep[id] = 0;
  }

  let mass = 0;
  let last = -1;
  for (let id = 0; id < vocab; id++) {
    if (keep[id] !== 1) continue;
    mass += p[id]!;
    last = id;
  }
  const target = rng.next() * mass;
  let running = 0;
  for (let id = 0; id < vocab; id++) {
    if (keep[id] !== 1) continue;
    running += p[id]!;
    if (running > target) return id;
  }
  return last;
}
