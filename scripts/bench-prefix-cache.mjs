#!/usr/bin/env node
// Automatic prefix caching at the reference origin (origin/engines/decoder/prefix-cache.ts), side
// by side in one run: two origins, one keeping prompt blocks (ORIGIN_PREFIX_CACHE_MIB=64, the
// default) and one not (0), over loopback with real SSE streams, greedy, ignore_eos. Workloads,
// each a closed loop of N clients sending requests back to back (≥ --min-tokens per cell):
//   shared    every prompt is one --system-token prefix (a system prompt, a few-shot preamble)
//             followed by a --suffix-token part of its own, then --new-tokens generated
//   distinct  prompts of the same length with nothing in common: what the cache costs when
//             nothing is reused (their first blocks are never seen twice, so nothing is kept)
// Reported per cell (medians over interleaved rounds): time to first token, aggregate tokens/s, and
// the origin's CPU per request (its process_cpu_seconds_total), cached ÷ uncached; and the cached
// origin's hit rate (vllm:prefix_cache_hits ÷ vllm:prefix_cache_queries). Usage: node
// scripts/bench-prefix-cache.mjs [--rounds 5] [--system 384] [--suffix 64] [--new-tokens 32]
// [--concurrency 1,16] [--min-tokens 2048]
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { originMetric, streamCompletion } from "./lib/completion-stream.mjs";
import { startOrigin } from "./lib/origin.mjs";
import { percentile, shuffle } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    system: { type: "string", default: "384" },
    suffix: { type: "string", default: "64" },
    "new-tokens": { type: "string", default: "32" },
    concurrency: { type: "string", default: "1,16" },
    "min-tokens": { type: "string", default: "2048" },
    model: { type: "string", default: "tiny-llm" },
  },
});
const [ROUNDS, SYSTEM, SUFFIX, NEW_TOKENS, MIN_TOKENS] = [
  "rounds",
  "system",
  "suffix",
  "new-tokens",
  "min-tokens",
].map((name) => Number(options[name]));
const CONCURRENCY = options.concurrency.split(",").map(Number);
const MODEL = options.model;
const manifest = JSON.parse(readFileSync(`models/${MODEL}/manifest.json`, "utf8"));
const { vocabSize, contextLength, bosTokenId = 1, graph } = manifest.generation;
if (SYSTEM + SUFFIX + NEW_TOKENS > contextLength)
  throw new Error(`--system + --suffix + --new-tokens must fit the context (${contextLength})`);

/** `length` deterministic ids (LCG), distinct per `seed`. */
const ids = (length, seed) => {
  let state = (seed * 2654435761) >>> 0;
  return Array.from(
    { length },
    () => 7 + ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % (vocabSize - 7)),
  );
};
const SYSTEM_IDS = [bosTokenId, ...ids(SYSTEM - 1, 1)];
const WORKLOADS = {
  shared: (seed) => [...SYSTEM_IDS, ...ids(SUFFIX, seed)],
  distinct: (seed) => [bosTokenId, ...ids(SYSTEM + SUFFIX - 1, seed)],
};
const median = (values) => percentile(values, 50);

const settings = {
  ORIGIN_GENERATION_GRAPH: graph,
  ORIGIN_MAX_BATCH: "64",
  ORIGIN_MAX_WAITING: "256",
};
const origins = {
  cached: await startOrigin({ ...settings, ORIGIN_PREFIX_CACHE_MIB: "64" }),
  uncached: await startOrigin({ ...settings, ORIGIN_PREFIX_CACHE_MIB: "0" }),
};

/**
 * One closed-loop cell: TTFT of every request, tokens/s while every client is busy, origin CPU per
 * request.
 */
async function cell(url, workload, streams, round) {
  const reps = Math.max(2, Math.ceil(MIN_TOKENS / (streams * NEW_TOKENS)));
  const cpu0 = await originMetric(url, "process_cpu_seconds_total");
  const started = performance.now();
  const ttfts = [];
  const clients = await Promise.all(
    Array.from({ length: streams }, async (_, client) => {
      const arrivals = [];
      for (let rep = 0; rep < reps; rep++) {
        const sent = performance.now();
        const times = await streamCompletion(
          url,
          MODEL,
          WORKLOADS[workload](1000 + round * 100_000 + rep * 1000 + client),
          NEW_TOKENS,
        );
        ttfts.push(times[0] - sent);
        arrivals.push(...times);
      }
      return arrivals;
    }),
  );
  const cpu = (await originMetric(url, "process_cpu_seconds_total")) - cpu0;
  const end = Math.min(...clients.map((times) => times.at(-1)));
  const tokens = clients.reduce((sum, times) => sum + times.filter((t) => t <= end).length, 0);
  return {
    ttft: median(ttfts),
    tokensPerSecond: tokens / ((end - started) / 1000),
    cpuPerRequest: (cpu / (streams * reps)) * 1000,
  };
}

// Warm-up: the sessions, and the shared prefix in the cached origin's blocks (as a service that has
// seen it once).
for (const origin of Object.values(origins))
  for (let i = 0; i < 4; i++)
    await streamCompletion(origin.url, MODEL, WORKLOADS.shared(i), NEW_TOKENS);

const cells = Object.keys(WORKLOADS).flatMap((workload) =>
  CONCURRENCY.flatMap((streams) =>
    Object.keys(origins).map((name) => ({ workload, streams, name })),
  ),
);
const results = new Map(
  cells.map(({ workload, streams, name }) => [`${workload}:${streams}:${name}`, []]),
);
const loads = [loadavg()[0]];
const began = Date.now();
/** The cached origin's prefix-cache counters over each workload's cells: [queried, hit] tokens. */
const counted = Object.fromEntries(Object.keys(WORKLOADS).map((workload) => [workload, [0, 0]]));
const counters = async () =>
  Promise.all(
    ["vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"].map((name) =>
      originMetric(origins.cached.url, name),
    ),
  );
for (let round = 0; round < ROUNDS; round++) {
  for (const { workload, streams, name } of shuffle(cells, round)) {
    const before = await counters();
    results
      .get(`${workload}:${streams}:${name}`)
      .push(await cell(origins[name].url, workload, streams, round));
    const after = await counters();
    counted[workload] = counted[workload].map((value, i) => value + after[i] - before[i]);
  }
  loads.push(loadavg()[0]);
}
const blocks = await originMetric(origins.cached.url, "origin_prefix_cache_bytes");
await Promise.all(Object.values(origins).map((origin) => origin.stop()));

const m = (workload, streams, name, field) =>
  median(results.get(`${workload}:${streams}:${name}`).map((result) => result[field]));
console.log(
  `prefix caching at the reference origin: ${MODEL} ${manifest.version}, ` +
    `graph "${graph}", onnxruntime-node CPU, one intra-op thread; ` +
    `prompts of ${SYSTEM + SUFFIX} tokens (shared: ${SYSTEM} in common + ${SUFFIX} ` +
    `of their own; distinct: nothing in common), ${NEW_TOKENS} new tokens; ` +
    `${ROUNDS} interleaved rounds (medians), ${Math.round((Date.now() - began) / 1000)} ` +
    `s; load average ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`,
);
console.log(
  "workload  streams  TTFT cached / uncached (ms)        tokens/s cached " +
    "/ uncached          origin CPU per request cached / uncached (ms)",
);
for (const workload of Object.keys(WORKLOADS)) {
  for (const streams of CONCURRENCY) {
    const pair = (field, digits) => {
      const [a, b] = [
        m(workload, streams, "cached", field),
        m(workload, streams, "uncached", field),
      ];
      return `${a.toFixed(digits)} / ${b.toFixed(digits)} (${(a / b).toFixed(2)}×)`.padEnd(34);
    };
    console.log(
      `${workload.padEnd(8)}  ${String(streams).padStart(7)}  ${pair("ttft", 1)} ` +
        `${pair("tokensPerSecond", 0)} ${pair("cpuPerRequest", 2)}`,
    );
  }
}
const rates = Object.entries(counted).map(
  ([workload, [queries, hits]]) =>
    `${workload} ${((hits / queries) * 100).toFixed(1)} % (${hits} of ${queries})`,
);
console.log(
  `cached origin: prompt tokens found in the prefix cache: ${rates.join(", ")}; ` +
    `${(blocks / 2 ** 20).toFixed(1)} MiB of blocks held at the end`,
);
const blockCost = JSON.parse(
  execFileSync(
    "node_modules/.bin/tsx",
    ["scripts/bench-prefix-cache-blocks.ts", String(SYSTEM + SUFFIX)],
    { encoding: "utf8" },
  ),
);
console.log(
  `in-process, per ${blockCost.tokens}-token prompt ` +
    "(scripts/bench-prefix-cache-blocks.ts, a full 64 MiB cache): its first block " +
    `never seen (the doorkeeper) ${blockCost.insertUnseenMs.toFixed(3)} ms; ` +
    `keeping its blocks ${blockCost.insertNewMs.toFixed(3)} ms when none ` +
    `was cached, ${blockCost.insertCachedMs.toFixed(3)} ms when all ` +
    `were; a lookup that misses ${blockCost.matchMissMs.toFixed(4)} ms`,
);
