// The shared sampler (src/generation/sampler.ts, prng.ts, logit-processors.ts): its PRNG
// against the xoshiro128** reference outputs and an independent Python rendering of the
// seeding, and each filter (temperature, top-k, top-p, min-p, suppression) and the penalties
// against hand-computed cases; tokenLogprob (vLLM's raw logprobs) against a hand-computed
// log_softmax.
import { describe, expect, it } from "vitest";
import { tokenLogprob } from "../../../src/generation/logprobs";
import { adjustLogits, hasPenalties, TokenHistory } from "../../../src/generation/logit-processors";
import { argmax, sample } from "../../../src/generation/sampler";
import { createPrng, xoshiro128StarStar } from "../../../src/generation/prng";
import { GREEDY, type SamplingParams } from "../../../src/generation/sampling-params";

const params = (overrides: Partial<SamplingParams>): SamplingParams => ({
  temperature: 1,
  topK: 0,
  topP: 1,
  minP: 0,
  ...overrides,
});

/** Draws `n` tokens with a fresh PRNG of the given seed and counts each id. */
function histogram(
  logits: number[],
  sampling: SamplingParams,
  n: number,
  suppressed: ReadonlySet<number> = new Set(),
): Map<number, number> {
  const rng = createPrng(7);
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const id = sample(logits, sampling, rng, suppressed);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe("PRNG", () => {
  it("is xoshiro128**: the reference outputs from state {1, 2, 3, 4}", () => {
    // Outputs of the authors' xoshiro128starstar.c (prng.di.unimi.it) from s = {1, 2, 3, 4}.
    const next = xoshiro128StarStar([1, 2, 3, 4]);
    expect(Array.from({ length: 6 }, next)).toEqual([
      11520, 0, 5927040, 70819200, 2031721883, 1637235492,
    ]);
  });

  it(
    "seeds by SplitMix32 as specified (values from " +
      "an independent Python rendering of the spec)",
    () => {
      const draws = (seed: number) => Array.from({ length: 4 }, createPrng(seed).next);
      expect(draws(0)).toEqual([
        0.8868539333343506, 0.2639589309692383, 0.01247495412826538, 0.6732364892959595,
      ]);
      expect(draws(42)).toEqual([
        0.6606156826019287, 0.12688004970550537, 0.11170190572738647, 0.8149393796920776,
      ]);
      expect(draws(-1)).toEqual([
        0.7191298007965088, 0.05179238319396973, 0.8594059348106384, 0.7152802348136902,
      ]);
      expect(draws(2 ** 40 + 7)).toEqual([
        0.8698235750198364, 0.603121280670166, 0.6630866527557373, 0.2604905366897583,
      ]);
    },
  );

  it("refuses a seed that is not a safe integer", () => {
    expect(() => createPrng(0.5)).toThrow(RangeError);
  });
});

describe("sample", () => {
  it("is greedy at temperature 0 and at top-k 1, ties to the lowest id, without drawing", () => {
    const rng = createPrng(1);
    expect(sample([0.1, 3, 3, -2], GREEDY, rng)).toBe(1);
    expect(sample([0.1, 3, 3, -2], params({ topK: 1 }), rng)).toBe(1);
    expect(rng.next()).toBe(createPrng(1).next());
    expect(argmax([Number.NaN, -Infinity, -5])).toBe(2);
  });

  it("never picks a suppressed id (min_tokens keeps EOS out), greedy or sampled", () => {
    expect(argmax([0, 9, 1], new Set([1]))).toBe(2);
    const counts = histogram([0, 9, 1], params({}), 500, new Set([1]));
    expect(counts.has(1)).toBe(false);
    expect(sample([0, 9, 1], params({}), createPrng(3), new Set([1]))).not.toBe(1);
  });

  it("samples the softmax at temperature 1 (frequencies within 3 sigma)", () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const n = 20_000;
    const counts = histogram(logits, params({}), n);
    for (const [id, p] of [
      [0, 0.5],
      [1, 0.3],
      [2, 0.2],
    ] as const) {
      const sigma = Math.sqrt(n * p * (1 - p));
      expect(Math.abs((counts.get(id) ?? 0) - n * p)).toBeLessThan(3 * sigma);
    }
  });

  it("sharpens with a low temperature and flattens with a high one", () => {
    const logits = [1, 0];
    expect(histogram(logits, params({ temperature: 0.1 }), 1000).get(1) ?? 0).toBeLessThan(5);
    const flat = histogram(logits, params({ temperature: 100 }), 4000).get(1) ?? 0;
    expect(flat).toBeGreaterThan(1800);
  });

  it("keeps only the k largest with top-k (ties by lowest id)", () => {
    const counts = histogram([1, 5, 5, 5, 0], params({ topK: 2 }), 2000);
    expect([...counts.keys()].sort()).toEqual([1, 2]);
  });

  it("keeps the smallest nucleus reaching top-p", () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
    expect([...histogram(logits, params({ topP: 0.79 }), 3000).keys()].sort()).toEqual([0, 1]);
    expect([...histogram(logits, params({ topP: 0.81 }), 3000).keys()].sort()).toEqual([0, 1, 2]);
    expect([...histogram(logits, params({ topP: 0.01 }), 200).keys()]).toEqual([0]);
  });

  it("drops ids below min-p times the top probability", () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
    expect([...histogram(logits, params({ minP: 0.35 }), 3000).keys()].sort()).toEqual([0, 1]);
  });

  it("gives the same ids for the same seed and different ids for another", () => {
    const logits = Array.from({ length: 64 }, (_, i) => Math.sin(i));
    const run = (seed: number) => {
      const rng = createPrng(seed);
      return Array.from({ length: 32 }, () =>
        sample(logits, params({ temperature: 0.9, topP: 0.95, topK: 40 }), rng),
      );
    };
    expect(run(123)).toEqual(run(123));
    expect(run(123)).not.toEqual(run(124));
  });

  it("accepts a Float32Array row view (a batch's logits without copying)", () => {
    const batch = new Float32Array([0, 1, 2, 9, 1, 0]);
    expect(sample(batch.subarray(3, 6), GREEDY, createPrng(0))).toBe(0);
  });
});

describe("logit bias and penalties", () => {
  // The prompt holds ids 0 and 1; ids 3, 3 and 2 were generated.
  const history = () => {
    const h = new TokenHistory([0, 1, 1]);
    for (const id of [3, 3, 2]) h.add(id);
    return h;
  };
  const logits = [2, -1, 0.5, 3, -2, 0];

  it(
    "repetition divides the logits > 0 and multiplies " +
      "the others, of prompt and generated ids alike",
    () => {
      // vllm/_custom_ops.py apply_repetition_penalties_torch: where(logits > 0, 1 / p, p) over
      // prompt_mask | output_mask.
      expect(
        Array.from(adjustLogits(logits, { ...GREEDY, repetitionPenalty: 2 }, history())),
      ).toEqual([1, -2, 0.25, 1.5, -2, 0]);
    },
  );

  it("frequency (× count) and presence (once) reach generated ids only, after repetition", () => {
    // vllm/model_executor/layers/utils.py apply_penalties: logits -= f × output_bin_counts; logits
    // -= p × output_mask.
    expect(
      Array.from(
        adjustLogits(
          logits,
          { ...GREEDY, frequencyPenalty: 0.5, presencePenalty: 0.25 },
          history(),
        ),
      ),
    ).toEqual([2, -1, -0.25, 1.75, -2, 0]);
    expect(
      Array.from(
        adjustLogits(
          logits,
          { ...GREEDY, repetitionPenalty: 2, frequencyPenalty: 0.5, presencePenalty: 0.25 },
          history(),
        ),
      ),
    ).toEqual([1, -2, -0.5, 0.25, -2, 0]);
    // Negative values favour repeats.
    expect(adjustLogits(logits, { ...GREEDY, presencePenalty: -2 }, history())[2]).toBe(2.5);
  });

  it("leaves the logits as they are (the same array, no copy) at the neutral values", () => {
    const row = new Float32Array(logits);
    expect(
      hasPenalties({ ...GREEDY, repetitionPenalty: 1, frequencyPenalty: 0, presencePenalty: 0 }),
    ).toBe(false);
    expect(adjustLogits(row, { ...GREEDY, repetitionPenalty: 1, logitBias: [] }, history())).toBe(
      row,
    );
    // no history: no penalties
    expect(adjustLogits(row, { ...GREEDY, frequencyPenalty: 1 })).toBe(row);
  });

  it(
    "allowed ids (vLLM's allowed_token_ids) mask every other id before the " +
      "bias: greedy picks the best listed, sampling draws only listed ids",
    () => {
      const row = [2, 1, 0.5, 3, -2, 0];
      expect(Array.from(adjustLogits(row, { ...GREEDY, allowedTokenIds: [1, 2, 99] }))).toEqual([
        -Infinity,
        1,
        0.5,
        -Infinity,
        -Infinity,
        -Infinity,
      ]);
      expect(
        Array.from(
          adjustLogits(row, {
            ...GREEDY,
            allowedTokenIds: [2, 5],
            logitBias: [
              [5, 1],
              [0, 10],
            ],
          }),
        ),
      ).toEqual([-Infinity, -Infinity, 0.5, -Infinity, -Infinity, 1]);
      expect(sample(row, { ...GREEDY, allowedTokenIds: [4, 1] }, createPrng(0))).toBe(1);
      const rng = createPrng(5);
      const drawn = new Set(
        Array.from({ length: 500 }, () =>
          sample(row, { ...params({ temperature: 2 }), allowedTokenIds: [4, 5] }, rng),
        ),
      );
      expect([...drawn].sort()).toEqual([4, 5]);
      // A suppressed id (min_tokens' stop ids) stays out unless nothing else is allowed.
      expect(sample(row, { ...GREEDY, allowedTokenIds: [1, 3] }, createPrng(0), new Set([3]))).toBe(
        1,
      );
      expect(sample(row, { ...GREEDY, allowedTokenIds: [3] }, createPrng(0), new Set([3]))).toBe(3);
    },
  );

  it(
    "a structured output's mask keeps only its ids, with allowed " +
      "ids too; a complete output's stop id wins over min_tokens",
    () => {
      const row = [2, 1, 0.5, 3, -2, 0];
      const mask = Uint8Array.from([0, 1, 1, 0, 1, 0]);
      expect(Array.from(adjustLogits(row, GREEDY, undefined, mask))).toEqual([
        -Infinity,
        1,
        0.5,
        -Infinity,
        -2,
        -Infinity,
      ]);
      expect(
        Array.from(adjustLogits(row, { ...GREEDY, allowedTokenIds: [2, 3, 4] }, undefined, mask)),
      ).toEqual([-Infinity, -Infinity, 0.5, -Infinity, -2, -Infinity]);
      expect(sample(row, GREEDY, createPrng(0), new Set(), undefined, mask)).toBe(1);
      const rng = createPrng(9);
      expect(
        new Set(
          Array.from({ length: 500 }, () =>
            sample(row, params({ temperature: 3 }), rng, new Set(), undefined, mask),
          ),
        ),
      ).toEqual(new Set([1, 2, 4]));
      // Only the stop id (5) left by the grammar: it is picked even while min_tokens suppresses it.
      const done = Uint8Array.from([0, 0, 0, 0, 0, 1]);
      expect(sample(row, GREEDY, createPrng(0), new Set([5]), undefined, done)).toBe(5);
      expect(
        sample(row, params({ temperature: 1 }), createPrng(0), new Set([5]), undefined, done),
      ).toBe(5);
    },
  );

  it(
    "adds the logit bias first, with or without a " +
      "history; repetition then sees the biased sign",
    () => {
      expect(
        Array.from(
          adjustLogits(logits, {
            ...GREEDY,
            logitBias: [
              [4, 100],
              [0, -2.5],
              [99, 5],
            ],
          }),
        ),
      ).toEqual([-0.5, -1, 0.5, 3, 98, 0]);
      // id 0: 2 - 2.5 = -0.5, then × 2 (no longer > 0); id 3: (3 + 1) / 2 = 2.
      expect(
        Array.from(
          adjustLogits(
            logits,
            {
              ...GREEDY,
              repetitionPenalty: 2,
              logitBias: [
                [0, -2.5],
                [3, 1],
              ],
            },
            history(),
          ),
        ),
      ).toEqual([-1, -2, 0.25, 2, -2, 0]);
      // -100 bans a token as OpenAI documents, greedy or sampled.
      expect(sample(logits, { ...GREEDY, logitBias: [[3, -100]] }, createPrng(0))).toBe(0);
      const rng = createPrng(2);
      expect(
        Array.from({ length: 500 }, () =>
          sample(logits, { ...params({}), logitBias: [[3, -100]] }, rng),
        ),
      ).not.toContain(3);
    },
  );

  it("change what greedy picks, and the sampled distribution, only when a history is given", () => {
    const penalized = { ...GREEDY, frequencyPenalty: 2 };
    expect(sample(logits, penalized, createPrng(0))).toBe(3);
    expect(sample(logits, penalized, createPrng(0), new Set(), history())).toBe(0);
    // At temperature 1, id 3 (logit 3, generated twice) falls from the likeliest to rare.
    const h = history();
    const rng = createPrng(5);
    const picks = Array.from({ length: 2000 }, () =>
      sample(logits, { ...params({}), frequencyPenalty: 2 }, rng, new Set(), h),
    );
    expect(picks.filter((id) => id === 3).length).toBeLessThan(100);
    expect(picks.filter((id) => id === 0).length).toBeGreaterThan(1200);
  });

  it("reaches each seen id once: the prompt's, then generated ids the prompt lacks", () => {
    const h = new TokenHistory([4, 4, 1]);
    for (const id of [1, 7, 7, 2]) h.add(id);
    expect([...h.seen()]).toEqual([4, 1, 7, 2]);
    expect([...h.counts]).toEqual([
      [1, 1],
      [7, 2],
      [2, 1],
    ]);
  });
});

describe("tokenLogprob", () => {
  it(
    "is the log_softmax of the row: the generated " + "id's and the top ids', most likely first",
    () => {
      const logits = [1, 2, 3, 2, -1];
      const norm = Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3) + Math.exp(2) + Math.exp(-1));
      const { logprob, top } = tokenLogprob(logits, 4, 3);
      expect(logprob).toBeCloseTo(-1 - norm, 12);
      expect(top.map(([id]) => id)).toEqual([2, 1, 3]); // 2 and 3 tie: the lower id first
      top.forEach(([id, value]) => expect(value).toBeCloseTo(logits[id]! - norm, 12));
      // Probabilities given as logits come back as their logs.
      const halves = tokenLogprob(
        [Math.log(0.5), Math.log(0.25), Math.log(0.125), Math.log(0.125)],
        1,
        4,
      );
      expect(halves.logprob).toBeCloseTo(Math.log(0.25), 12);
      expect(halves.top.map(([id]) => id)).toEqual([0, 1, 2, 3]);
      halves.top.forEach(([, value], i) =>
        expect(value).toBeCloseTo(Math.log([0.5, 0.25, 0.125, 0.125][i]!), 12),
      );
    },
  );

  it("sorts the top by logprob desc, ties to the lower id, whatever order the ids come in", () => {
    expect(tokenLogprob([0, 5, 5, 1, 5], 0, 2).top.map(([id]) => id)).toEqual([1, 2]);
    expect(tokenLogprob([9, 0, 0, 0, 0, 9, 0, 9], 0, 3).top.map(([id]) => id)).toEqual([0, 5, 7]);
    expect(tokenLogprob([1, 2, 3, 4, 5, 6], 0, 4).top.map(([id]) => id)).toEqual([5, 4, 3, 2]);
    // More than the vocabulary: all of it.
    expect(tokenLogprob([0, 1], 0, 20).top.map(([id]) => id)).toEqual([1, 0]);
  });

  it("lists no alternatives for count 0, and reads a Float32Array row view", () => {
    expect(tokenLogprob([1, 2, 3], 2, 0).top).toEqual([]);
    const batch = new Float32Array([7, 7, 0, Math.log(3), Math.log(1)]);
    const row = tokenLogprob(batch.subarray(3, 5), 1, 1);
    expect(row.logprob).toBeCloseTo(Math.log(0.25), 6);
    expect(row.top.map(([id]) => id)).toEqual([0]);
  });

  it("gives -Infinity to an id whose logit is -Infinity, and ranks it last", () => {
    const { logprob, top } = tokenLogprob([0, -Infinity, 0], 1, 3);
    expect(logprob).toBe(-Infinity);
    expect(top.map(([id]) => id)).toEqual([0, 2, 1]);
    expect(top[0]![1]).toBeCloseTo(Math.log(0.5), 12);
    expect(top[1]![1]).toBeCloseTo(Math.log(0.5), 12);
    expect(top[2]![1]).toBe(-Infinity);
  });
});
