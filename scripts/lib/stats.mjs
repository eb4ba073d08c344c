// Latency summaries shared by the benchmark scripts.

/** The p-th percentile (nearest rank) of a list of timings. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * The items in an order of their own per `seed` (deterministic): interleaved cells run in a new
 * order each round.
 */
export function shuffle(items, seed) {
  return items
    .map((item, i) => [((i + 1) * 2654435761 * (seed + 1)) % 1000, item])
    .sort((a, b) => a[0] - b[0])
    .map(([, item]) => item);
}

export function summary(times) {
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
  };
}

/**
 * Times engines side by side: each is warmed up for `warmupMs` (V8 optimizes hot WASM functions
 * only after its baseline tier), then they take turns in blocks of `block` runs, so the noise of
 * a shared machine falls on all of them alike while each block runs with warm caches.
 * `run(i)` runs an engine on input i of `inputs`. Returns one summary per engine.
 * @param {((i: number) => Promise<unknown>)[]} runs
 * @param {{ inputs: number, block: number, warmupMs: number }} options
 */
export async function timeInterleaved(runs, { inputs, block, warmupMs }) {
  for (const run of runs) {
    const warmStart = performance.now();
    for (let i = 0; performance.now() - warmStart < warmupMs; i++) await run(i % inputs);
  }
  const times = runs.map(() => []);
  for (let start = 0; start < inputs; start += block) {
    for (const [k, run] of runs.entries()) {
      for (let i = start; i < Math.min(start + block, inputs); i++) {
        const started = performance.now();
        await run(i);
        times[k].push(performance.now() - started);
      }
    }
  }
  return times.map(summary);
}
