// The origin's decoder engine alone, in-process (no HTTP, no SSE, no client): the same cells as
// scripts/bench-origin.mjs (N clients in a closed loop, prompt = context − new tokens, greedy,
// ignore_eos), the same session setup as origin/model-host.ts (split attention and last-position
// logits for the steps, the graph as exported with last-position logits for prefills, one intra-op
// thread). It says how much of the end-to-end ratio the engine itself allows: what HTTP/SSE costs
// is the difference. Prints one JSON line per cell (medians over interleaved rounds);
// bench-origin.mjs runs it after its HTTP cells and prints the table. Usage: npx tsx
// scripts/bench-origin-engine.ts [--rounds 5] [--min-tokens 2048] [--new-tokens 32] [--contexts
// 64,512] [--concurrency 1,4,16,64] [--graph decoder]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DecoderEngine } from "../origin/engines/decoder/engine";
import { createSession } from "../origin/engines/onnx-session";
import { parseManifest } from "../origin/manifests";
import { Registry } from "../origin/metrics/prometheus";
import { createVllmMetrics } from "../origin/metrics/vllm-metrics";
import { readVerifiedFile } from "../origin/model-files";
import { lastPositionLogits } from "../origin/onnx/last-logits";
import { splitAttention } from "../origin/onnx/split-attention";
import { GREEDY } from "../src/generation/sampling-params";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    "min-tokens": { type: "string", default: "2048" },
    "new-tokens": { type: "string", default: "32" },
    contexts: { type: "string", default: "64,512" },
    concurrency: { type: "string", default: "1,4,16,64" },
    model: { type: "string", default: "tiny-llm" },
    graph: { type: "string" },
  },
});
const [ROUNDS, NEW, MIN_TOKENS] = [
  Number(options.rounds),
  Number(options["new-tokens"]),
  Number(options["min-tokens"]),
];
const DIR = `models/${options.model}`;
const manifest = parseManifest(
  JSON.parse(readFileSync(`${DIR}/manifest.json`, "utf8")),
  options.graph,
);
if (manifest.kind !== "generation")
  throw new Error(`${options.model} is not a text-generation model`);
const { generation } = manifest;
const bytes = await readVerifiedFile(DIR, manifest.graph.file, manifest.graph.sha256);
const settings = { executionProviders: ["cpu"], intraOpThreads: 1 };
const split = splitAttention(bytes, generation.layers);
const stepGraph = split === null ? null : lastPositionLogits(split);
const prefillGraph = lastPositionLogits(bytes);
if (stepGraph === null || prefillGraph === null)
  throw new Error("the decoder graph does not have the exported pattern");
const registry = new Registry();
const engine = new DecoderEngine(
  manifest.name,
  await createSession(stepGraph, settings),
  generation,
  {
    maxBatch: 64,
    maxWaiting: 256,
    prefillTokensPerStep: 2048,
    prefixCacheBytes: Number(process.env.ORIGIN_PREFIX_CACHE_MIB ?? 64) * 2 ** 20,
  },
  createVllmMetrics(registry, () => [], generation.contextLength),
  true,
  await createSession(prefillGraph, settings),
);
const counter = (name: string) =>
  Number(
    / (\S+)$/.exec(
      registry
        .render()
        .split("\n")
        .find((line) => line.startsWith(`${name}{`)) ?? " 0",
    )?.[1],
  );

/** The same deterministic prompts as bench-origin.mjs. */
function prompt(length: number, seed: number): number[] {
  let state = (seed * 2654435761) >>> 0;
  return [
    generation.bosTokenId ?? 1,
    ...Array.from(
      { length: length - 1 },
      () =>
        7 + ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % (generation.vocabSize - 7)),
    ),
  ];
}

interface Cell {
  tokensPerSecond: number;
  tokensPerCpuSecond: number;
  cpuPerStream: { prefill: number; decode: number; total: number };
}

/**
 * One cell, closed loop as in bench-origin.mjs: `streams` clients, each submitting `reps`
 * requests back to back (≥ --min-tokens per cell); the rate counts the tokens generated while
 * all clients are busy (until the first is done) over that time; CPU over the whole cell.
 */
async function cell(
  context: number,
  streams: number,
  round: number,
  minTokens = MIN_TOKENS,
): Promise<Cell> {
  const reps = Math.max(2, Math.ceil(minTokens / (streams * NEW)));
  const [steps0, prefill0] = [
    counter("origin_decode_step_cpu_seconds_total"),
    counter("origin_prefill_cpu_seconds_total"),
  ];
  const [started, cpu0] = [performance.now(), process.cpuUsage()];
  const clients = await Promise.all(
    Array.from({ length: streams }, async (_, i) => {
      const arrivals: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        const params = {
          promptIds: prompt(context - NEW, round * 100_000 + rep * 1000 + i),
          maxTokens: NEW,
          minTokens: 0,
          sampling: GREEDY,
          seed: 1,
          stopTokenIds: [],
          ignoreEos: true,
        };
        const request = engine.submit(params, new AbortController().signal);
        for await (const _step of request.steps) arrivals.push(performance.now());
      }
      return arrivals;
    }),
  );
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / 1e6;
  const tokens = clients.reduce((sum, times) => sum + times.length, 0);
  if (tokens !== streams * reps * NEW)
    throw new Error(`expected ${streams * reps * NEW} tokens, got ${tokens}`);
  const end = Math.min(...clients.map((times) => times.at(-1)!));
  const inWindow = clients.reduce((sum, times) => sum + times.filter((t) => t <= end).length, 0);
  const requests = streams * reps;
  const [steps, prefill] = [
    counter("origin_decode_step_cpu_seconds_total") - steps0,
    counter("origin_prefill_cpu_seconds_total") - prefill0,
  ];
  return {
    tokensPerSecond: inWindow / ((end - started) / 1000),
    tokensPerCpuSecond: tokens / cpu,
    cpuPerStream: {
      prefill: (prefill / requests) * 1000,
      decode: (steps / requests) * 1000,
      total: (cpu / requests) * 1000,
    },
  };
}

const contexts = options.contexts
  .split(",")
  .map((context) => Math.min(Number(context), generation.contextLength));
const concurrency = options.concurrency.split(",").map(Number);
const keys = contexts.flatMap((context) => concurrency.map((streams) => ({ context, streams })));
const results = new Map(
  keys.map(({ context, streams }) => [`${context}:${streams}`, [] as Cell[]]),
);
// warm-up (two requests per client)
for (const { context, streams } of keys) await cell(context, streams, 99, 0);
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? keys : [...keys].reverse();
  for (const { context, streams } of order)
    results.get(`${context}:${streams}`)!.push(await cell(context, streams, round));
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const { context, streams } of keys) {
  const cells = results.get(`${context}:${streams}`)!;
  const part = (key: keyof Cell["cpuPerStream"]) => median(cells.map((c) => c.cpuPerStream[key]));
  console.log(
    JSON.stringify({
      context,
      streams,
      tokensPerSecond: median(cells.map((c) => c.tokensPerSecond)),
      tokensPerCpuSecond: median(cells.map((c) => c.tokensPerCpuSecond)),
      cpuPerStream: { prefill: part("prefill"), decode: part("decode"), total: part("total") },
    }),
  );
}
process.exit(0);
