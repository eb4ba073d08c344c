// The token sampler both decode loops share (the origin's batched engine and the edge's in-isolate
// loop), so one seed gives the same ids in both places. Pure: logits row in, token id out.
import { adjustLogits, type TokenHistory } from "./logit-processors";
import type { Prng } from "./prng";
import { isGreedy, type SamplingParams } from "./sampling-params";

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
