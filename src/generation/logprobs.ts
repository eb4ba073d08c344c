// Log-probabilities of a generated token, as both decode loops report them (the origin's
// batched engine and the edge's in-isolate loop): the same function over the same logits
// row the sampler (./sampler.ts) reads, so both places give the same numbers.

/**
 * The most alternatives a token's logprobs may list (vLLM's default max_logprobs, OpenAI's
 * top_logprobs bound).
 */
export const MAX_LOGPROBS = 20;

/** A generated token's log-probability and the `top` most likely ids at its position. */
export interface TokenLogprob {
  /** The generated id's log-probability. */
  logprob: number;
  /** [id, logprob] of the most likely ids, most likely first (ties: lowest id first). */
  top: Array<readonly [number, number]>;
}

/**
 * The log-probabilities of a logits row as vLLM reports them by default (its
 * `--logprobs-mode raw_logprobs`, vllm/v1/sample/sampler.py: the model's own distribution,
 * before the logit bias, penalties, temperature and truncation): log_softmax in float64
 * (its total summed in ascending id order), for the generated id and the `count` most likely.
 */
export function tokenLogprob(logits: ArrayLike<number>, id: number, count: number): TokenLogprob {
  const vocab = logits.length;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) if (logits[i]! > max) max = logits[i]!;
  let total = 0;
  for (let i = 0; i < vocab; i++) total += Math.exp(logits[i]! - max);
  const norm = max + Math.log(total);
  // The `count` largest, kept sorted (value desc, id asc) by insertion: count ≤ MAX_LOGPROBS.
  const top: number[] = [];
  const k = Math.min(Math.max(0, Math.floor(count)), vocab);
  for (let i = 0; i < vocab && k > 0; i++) {
    const value = logits[i]!;
    if (top.length === k) {
      if (!(value > logits[top[k - 1]!]!)) continue; // an equal value keeps the lower id
      top.pop();
    }
    let at = top.length;
    while (at > 0 && value > logits[top[at - 1]!]!) at--;
    top.splice(at, 0, i);
  }
  return { logprob: logits[id]! - norm, top: top.map((i) => [i, logits[i]! - norm] as const) };
}
