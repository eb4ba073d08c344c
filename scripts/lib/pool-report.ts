// The pool benchmark's per-turn summary: what each policy left its origins to compute at each
// turn of the conversations, and the time to first token it gave.
import { percentile } from "./stats.mjs";

/** One request as the client saw it: its turn, prompt, cached tokens and time to first token. */
export interface Sample {
  turn: number;
  prompt: number;
  cached: number;
  ttft: number;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

/** Per turn, both policies over all rounds: prompt and computed tokens (mean), TTFT p50. */
export function perTurn(samples: { affinity: Sample[]; roundRobin: Sample[] }, turns: number) {
  return Array.from({ length: turns }, (_, turn) => {
    const of = (list: Sample[]) => list.filter((sample) => sample.turn === turn);
    const [affinity, roundRobin] = [of(samples.affinity), of(samples.roundRobin)];
    const computed = (list: Sample[]) =>
      mean(list.map(({ prompt, cached }) => prompt - cached)).toFixed(0);
    const p50 = (list: Sample[]) =>
      percentile(
        list.map(({ ttft }) => ttft),
        50,
      );
    return {
      turn: turn + 1,
      "prompt tokens (mean)": mean(affinity.map(({ prompt }) => prompt)).toFixed(0),
      "computed: affinity / round-robin": `${computed(affinity)} / ${computed(roundRobin)}`,
      "TTFT p50 ms: affinity / round-robin": [affinity, roundRobin]
        .map((list) => p50(list).toFixed(1))
        .join(" / "),
      "affinity ÷ round-robin": (p50(affinity) / p50(roundRobin)).toFixed(2),
    };
  });
}
