#!/usr/bin/env node
// Reference origin benchmark (origin/, onnxruntime-node, one intra-op thread), over loopback with
// real SSE streams, side by side in one run:
//   throughput  aggregate generated tokens/s at 1, 4, 16, 64 concurrent streams (closed loop:
//               each stream a client sending requests back to back, ≥ --min-tokens per cell), per
//               shape "context/new tokens" (prompt = context − new tokens): 64/32 and 512/256 (half
//               prompt, half generated, the same shape at both contexts) and 512/32 (a long
//               prompt and a short answer, prefill-bound), and the ratio to
//               one stream at the same context; also tokens per CPU-second of the origin
//               process (its process_cpu_seconds_total; steadier than wall time on a shared
//               machine), and that CPU per stream split into prefill, decode steps and the
//               rest, with the ratio bound that prefill work (which batching cannot shrink) sets
//   steady      the same runs after the first burst of prefills: tokens/s counted at the client
//               from the moment every client has its first token to the moment the first client
//               is done (later requests join between steps, their prefills included)
//   thread      the same throughput cells (1 and 16 streams) against a second origin whose
//               decoder runs on the HTTP thread (ORIGIN_DECODER_THREAD=false), as before it had a
//               thread of its own: what the engine thread buys
//   engine      the decoder engine alone, in-process (scripts/bench-origin-engine.ts: no HTTP,
//               SSE or client), the same cells: how much of the ratio the decode loop allows
//   step        decode step time (batch of one, and of 16) at context ≈16 vs ≈512, from the
//               origin's own origin_decode_step_seconds, and the prefill of a 511-token prompt
//               (what recomputing the prefix would cost per token without a KV cache) — for
//               the split-attention graph the origin runs and, beside it, a second origin
//               running the graph as exported (ORIGIN_SPLIT_ATTENTION=false: the cache is
//               concatenated, i.e. copied, inside every step)
// Cells are interleaved: every round runs every cell once, in a new order; medians are reported,
// with the load average seen during the run. Usage: node scripts/bench-origin.mjs [--rounds 3]
// [--min-tokens 2048] [--shapes 64/32,512/32,512/256] [--graph decoder]
//          [--concurrency 1,4,16,64] [--no-steps] [--no-engine] [--no-http-thread]
//            (subsets, for quick comparisons)
//          [--stream-interval 1]   (ORIGIN_STREAM_INTERVAL of the origins: token ids per chunk
//                                   after the first, as vLLM's --stream-interval)
//        (--contexts 64,512 --new-tokens 32: the shapes of every context with that many new tokens)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { streamCompletion } from "./lib/completion-stream.mjs";
import { startOrigin } from "./lib/origin.mjs";
import { percentile, shuffle } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    "min-tokens": { type: "string", default: "2048" },
    shapes: { type: "string", default: "64/32,512/32,512/256" },
    "new-tokens": { type: "string" },
    graph: { type: "string" },
    model: { type: "string", default: "tiny-llm" },
    contexts: { type: "string" },
    concurrency: { type: "string", default: "1,4,16,64" },
    "no-steps": { type: "boolean", default: false },
    "no-engine": { type: "boolean", default: false },
    "no-http-thread": { type: "boolean", default: false },
    "stream-interval": { type: "string", default: "1" },
  },
});
const ROUNDS = Number(options.rounds);
/**
 * Tokens a throughput cell generates at least (each client sends requests back to back until then).
 */
const MIN_TOKENS = Number(options["min-tokens"]);
const MODEL = options.model;
const manifest = JSON.parse(readFileSync(`models/${MODEL}/manifest.json`, "utf8"));
const graph = options.graph ?? manifest.generation.graph;
const { vocabSize, contextLength, bosTokenId = 1 } = manifest.generation;
const CONCURRENCY = options.concurrency.split(",").map(Number);
/**
 * A cell's shape: `context` tokens at the end, `newTokens` of them generated; `key` names it
 * ("512/256").
 */
const SHAPES = (
  options.contexts === undefined && options["new-tokens"] === undefined
    ? options.shapes.split(",").map((shape) => shape.split("/").map(Number))
    : (options.contexts ?? "64,512")
        .split(",")
        .map((context) => [Number(context), Number(options["new-tokens"] ?? 32)])
).map(([context, newTokens]) => {
  const capped = Math.min(context, contextLength);
  if (!(newTokens > 0 && newTokens < capped))
    throw new Error(`shape ${context}/${newTokens}: the new tokens must leave a prompt`);
  return { context: capped, newTokens, key: `${capped}/${newTokens}` };
});
const goalOf = (shape) => (shape.context <= 64 ? 4 : 2);
const STEPS = !options["no-steps"];
const HTTP_THREAD = !options["no-http-thread"];
const HTTP_THREAD_STREAMS = [1, 16].filter((streams) => CONCURRENCY.includes(streams));

/** A deterministic prompt of `length` ids (LCG), distinct per `seed`. */
function prompt(length, seed) {
  let state = (seed * 2654435761) >>> 0;
  return [
    bosTokenId,
    ...Array.from(
      { length: length - 1 },
      () => 7 + ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % (vocabSize - 7)),
    ),
  ];
}

const median = (values) => percentile(values, 50);

const settings = {
  ORIGIN_GENERATION_GRAPH: graph,
  ORIGIN_MAX_BATCH: "64",
  ORIGIN_MAX_WAITING: "256",
  ORIGIN_STREAM_INTERVAL: options["stream-interval"],
};
const origin = await startOrigin(settings);
const exported = STEPS
  ? await startOrigin({ ...settings, ORIGIN_SPLIT_ATTENTION: "false" })
  : undefined;
/**
 * The decoder on the HTTP thread (ORIGIN_DECODER_THREAD=false), as before it had a thread of its
 * own: 1 and 16 streams.
 */
const httpThread = HTTP_THREAD
  ? await startOrigin({ ...settings, ORIGIN_DECODER_THREAD: "false" })
  : undefined;

/**
 * One streamed completion; resolves with the arrival time (performance.now()) of each token id
 * received.
 */
const stream = (ids, maxTokens, url = origin.url) => streamCompletion(url, MODEL, ids, maxTokens);

async function counter(name, url = origin.url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(
    text
      .split("\n")
      .find((line) => line.startsWith(`${name}{`))
      ?.split(" ")
      .at(-1) ?? 0,
  );
}

/**
 * The origin process's CPU seconds (its process_cpu_seconds_total: microseconds, where /proc counts
 * 10 ms ticks).
 */
async function processCpu(url = origin.url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(
    text
      .split("\n")
      .find((line) => line.startsWith("process_cpu_seconds_total "))
      ?.split(" ")
      .at(-1),
  );
}

/** Sum and count of a metric family's _sum/_count series. */
async function histogram(name, url = origin.url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (suffix) =>
    Number(
      text
        .split("\n")
        .find((line) => line.startsWith(`${name}_${suffix}{`))
        ?.split(" ")
        .at(-1) ?? 0,
    );
  return { sum: read("sum"), count: read("count") };
}

/**
 * One cell, closed loop: `streams` clients, each sending `reps` requests back to back (distinct
 * prompts), so that requests join and leave the batch between steps as they would in service
 * and a cell covers ≥ MIN_TOKENS tokens (one 32-token stream alone is ~30 ms: too short to time).
 * The aggregate rate counts the tokens that arrive while all `streams` clients are busy — from
 * the start to the moment the first client is done — over that window; the steady rate the same
 * from the moment every client has its first token (the initial burst of prefills done).
 */
async function throughputCell({ context, newTokens }, streams, round, url = origin.url) {
  const reps = Math.max(2, Math.ceil(MIN_TOKENS / (streams * newTokens)));
  const read = async () => [
    await histogram("origin_decode_step_seconds", url),
    await counter("origin_decode_rows_total", url),
    await counter("origin_decode_step_cpu_seconds_total", url),
    await counter("origin_prefill_cpu_seconds_total", url),
  ];
  const [steps0, rows0, cpuSteps0, cpuPrefill0] = await read();
  const cpu0 = await processCpu(url);
  const client0 = process.cpuUsage();
  const started = performance.now();
  const clients = await Promise.all(
    Array.from({ length: streams }, async (_, i) => {
      const arrivals = [];
      for (let rep = 0; rep < reps; rep++)
        arrivals.push(
          ...(await stream(
            prompt(context - newTokens, round * 100_000 + rep * 1000 + i),
            newTokens,
            url,
          )),
        );
      return arrivals;
    }),
  );
  const tokens = clients.reduce((sum, times) => sum + times.length, 0);
  const client = process.cpuUsage(client0);
  if (tokens !== streams * reps * newTokens)
    throw new Error(`expected ${streams * reps * newTokens} tokens, got ${tokens}`);
  const cpu = (await processCpu(url)) - cpu0;
  const [steps1, rows1, cpuSteps1, cpuPrefill1] = await read();
  const end = Math.min(...clients.map((times) => times.at(-1)));
  const rate = (from) =>
    clients.reduce((sum, times) => sum + times.filter((t) => t > from && t <= end).length, 0) /
    ((end - from) / 1000);
  const requests = streams * reps;
  return {
    // CPU ms per request (one stream's prompt and tokens): prefill, decode steps, and the rest
    // (HTTP/SSE, scheduling, sampling)
    cpuPerStream: {
      prefill: ((cpuPrefill1 - cpuPrefill0) / requests) * 1000,
      decode: ((cpuSteps1 - cpuSteps0) / requests) * 1000,
      total: (cpu / requests) * 1000,
    },
    tokensPerSecond: rate(started),
    steadyTokensPerSecond: rate(Math.max(...clients.map((times) => times[0]))),
    tokensPerCpuSecond: tokens / cpu,
    clientMicrosPerToken: (client.user + client.system) / tokens,
    decodeTokensPerSecond: (rows1 - rows0) / (steps1.sum - steps0.sum),
    decodeTokensPerCpuSecond: (rows1 - rows0) / (cpuSteps1 - cpuSteps0),
  };
}

/**
 * Mean decode step of `rows` streams of `context`-token prompts on the origin at `url`: wall and
 * CPU ms.
 */
async function stepCell(context, rows, url) {
  const [before, cpuBefore] = [
    await histogram("origin_decode_step_seconds", url),
    await counter("origin_decode_step_cpu_seconds_total", url),
  ];
  await Promise.all(
    Array.from({ length: rows }, (_, i) => stream(prompt(context, context + i), 9, url)),
  );
  const [after, cpuAfter] = [
    await histogram("origin_decode_step_seconds", url),
    await counter("origin_decode_step_cpu_seconds_total", url),
  ];
  const steps = after.count - before.count;
  return {
    wall: ((after.sum - before.sum) / steps) * 1000,
    cpu: ((cpuAfter - cpuBefore) / steps) * 1000,
  };
}

async function prefillCell(length) {
  const [before, cpuBefore] = [
    await histogram("vllm:request_prefill_time_seconds"),
    await counter("origin_prefill_cpu_seconds_total"),
  ];
  await stream(prompt(length, 7), 1);
  const [after, cpuAfter] = [
    await histogram("vllm:request_prefill_time_seconds"),
    await counter("origin_prefill_cpu_seconds_total"),
  ];
  const count = after.count - before.count;
  return {
    wall: ((after.sum - before.sum) / count) * 1000,
    cpu: ((cpuAfter - cpuBefore) / count) * 1000,
  };
}

const loads = [loadavg()[0]];
try {
  for (let i = 0; i < 8; i++)
    await Promise.all(
      [origin, exported, httpThread].flatMap((server) =>
        server === undefined ? [] : [stream(prompt(32, i), 8, server.url)],
      ),
    ); // warm-up
  const cells = [
    ...SHAPES.flatMap((shape) =>
      CONCURRENCY.map((streams) => ({
        key: `tp:${shape.key}:${streams}`,
        run: (round) => throughputCell(shape, streams, round),
      })),
    ),
    ...(httpThread === undefined
      ? []
      : SHAPES.flatMap((shape) =>
          HTTP_THREAD_STREAMS.map((streams) => ({
            key: `http:${shape.key}:${streams}`,
            run: (round) => throughputCell(shape, streams, round, httpThread.url),
          })),
        )),
    ...(STEPS
      ? [
          ["split", origin.url],
          ["exported", exported.url],
        ]
      : []
    ).flatMap(([mode, url]) =>
      [1, 16].flatMap((rows) => [
        { key: `step:${mode}:${rows}:16`, run: () => stepCell(16, rows, url) },
        { key: `step:${mode}:${rows}:512`, run: () => stepCell(contextLength - 10, rows, url) },
      ]),
    ),
    ...(STEPS ? [{ key: "prefill:512", run: () => prefillCell(contextLength - 1) }] : []),
  ];
  const results = new Map(cells.map((cell) => [cell.key, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const cell of shuffle(cells, round)) {
      results.get(cell.key).push(await cell.run(round));
      loads.push(loadavg()[0]);
    }
    process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
  }

  const cores = (await import("node:os")).cpus().length;
  console.log(
    `origin benchmark: ${MODEL} graph "${graph}" (${manifest.graphs[graph].file}), ` +
      "onnxruntime-node CPU, 1 intra-op thread; shapes (context/new tokens per stream) " +
      `${SHAPES.map((shape) => shape.key).join(", ")}, greedy, ignore_eos; stream ` +
      `interval ${options["stream-interval"]}; ${ROUNDS} interleaved rounds, medians`,
  );
  console.log(
    `machine: ${cores} cores, 1-min load average during the run ` +
      `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} ` +
      `(median ${median(loads).toFixed(1)})\n`,
  );
  console.log(
    `closed loop: N clients, each sending requests back to back (≥ ${MIN_TOKENS} ` +
      "tokens per cell); aggregate = tokens that arrive while all N are busy / that time,",
  );
  console.log(
    "prefill and HTTP included; per CPU-s = all the cell's tokens " +
      "/ origin process CPU time (process_cpu_seconds_total);",
  );
  console.log(
    "decode = tokens / wall time inside decode steps (origin_decode_step_seconds); " +
      "decode per CPU-s = tokens / CPU time inside them",
  );
  console.log(
    "  shape  streams  tokens/s  ×1-stream  tokens/CPU-s  ×1-stream  " +
      "decode tok/s  ×1-stream  decode tok/CPU-s  ×1-stream",
  );
  for (const { key: context } of SHAPES) {
    const single = median(results.get(`tp:${context}:1`).map((r) => r.tokensPerSecond));
    const singleCpu = median(results.get(`tp:${context}:1`).map((r) => r.tokensPerCpuSecond));
    const singleDecode = median(results.get(`tp:${context}:1`).map((r) => r.decodeTokensPerSecond));
    const singleDecodeCpu = median(
      results.get(`tp:${context}:1`).map((r) => r.decodeTokensPerCpuSecond),
    );
    for (const streams of CONCURRENCY) {
      const rows = results.get(`tp:${context}:${streams}`);
      const tps = median(rows.map((r) => r.tokensPerSecond));
      const cpu = median(rows.map((r) => r.tokensPerCpuSecond));
      const decode = median(rows.map((r) => r.decodeTokensPerSecond));
      const decodeCpu = median(rows.map((r) => r.decodeTokensPerCpuSecond));
      console.log(
        `${String(context).padStart(7)}  ${String(streams).padStart(7)}  ` +
          `${tps.toFixed(1).padStart(8)}  ${(tps / single).toFixed(2).padStart(8)}×  ` +
          `${cpu.toFixed(1).padStart(12)}  ${(cpu / singleCpu).toFixed(2).padStart(8)}×  ` +
          `${decode.toFixed(1).padStart(12)}  ` +
          `${(decode / singleDecode).toFixed(2).padStart(8)}×  ` +
          `${decodeCpu.toFixed(1).padStart(16)}  ` +
          `${(decodeCpu / singleDecodeCpu).toFixed(2).padStart(8)}×`,
      );
    }
  }
  console.log(
    "the load generator (this process, on the same cores) used " +
      `${SHAPES.map(
        ({ key }) =>
          `${key}: ` +
          `${CONCURRENCY.map((streams) => median(results.get(`tp:${key}:${streams}`).map((r) => r.clientMicrosPerToken)).toFixed(0)).join(" / ")}`,
      ).join("; ")}` +
      ` µs of CPU per token at ${CONCURRENCY.join(" / ")} streams`,
  );
  console.log(
    "\nsteady state (the same runs): tokens/s from the moment every client has " +
      "its first token (the first burst of prefills done) to the moment the first",
  );
  console.log(
    "client is done, counted at the client (HTTP/SSE and the prefills of " +
      "requests that join meanwhile included); beside the end-to-end rate:",
  );
  console.log("  shape  streams  end-to-end tok/s  ×1-stream  steady-state tok/s  ×1-stream");
  for (const { key: context } of SHAPES) {
    const single = median(results.get(`tp:${context}:1`).map((r) => r.tokensPerSecond));
    const singleSteady = median(results.get(`tp:${context}:1`).map((r) => r.steadyTokensPerSecond));
    for (const streams of CONCURRENCY) {
      const rows = results.get(`tp:${context}:${streams}`);
      const [tps, steady] = [
        median(rows.map((r) => r.tokensPerSecond)),
        median(rows.map((r) => r.steadyTokensPerSecond)),
      ];
      console.log(
        `${String(context).padStart(7)}  ${String(streams).padStart(7)}  ` +
          `${tps.toFixed(1).padStart(16)}  ${(tps / single).toFixed(2).padStart(8)}×  ` +
          `${steady.toFixed(1).padStart(19)}  ` +
          `${(steady / singleSteady).toFixed(2).padStart(8)}×`,
      );
    }
  }
  if (STEPS) {
    console.log(
      "\ndecode step time, ms wall / CPU (a batch of 1 | of 16 rows), at context " +
        `≈16 (capacity 32) and ≈${contextLength - 10} (capacity ${contextLength}):`,
    );
    const cell = (mode, rows, context, key) =>
      median(results.get(`step:${mode}:${rows}:${context}`).map((r) => r[key]));
    for (const mode of ["split", "exported"]) {
      const label = mode === "split" ? "split attention (served)" : "graph as exported       ";
      const pair = (rows, context) =>
        `${cell(mode, rows, context, "wall").toFixed(2)}` +
        `/${cell(mode, rows, context, "cpu").toFixed(2)}`;
      const growth = (rows, key) =>
        (cell(mode, rows, 512, key) / cell(mode, rows, 16, key)).toFixed(2);
      console.log(
        `  ${label}  1 row: ${pair(1, 16)} → ${pair(1, 512)} (growth ` +
          `${growth(1, "wall")}× wall, ${growth(1, "cpu")}× CPU)   16 rows: ${pair(16, 16)} ` +
          `→ ${pair(16, 512)} (growth ${growth(16, "wall")}×, ${growth(16, "cpu")}×)`,
      );
    }
    const prefillWall = median(results.get("prefill:512").map((r) => r.wall));
    const prefillCpu = median(results.get("prefill:512").map((r) => r.cpu));
    const [step16, step512] = [cell("split", 1, 16, "wall"), cell("split", 1, 512, "wall")];
    const [step16Cpu, step512Cpu] = [cell("split", 1, 16, "cpu"), cell("split", 1, 512, "cpu")];
    console.log(
      `goal: step growth 16 → ${contextLength - 10}: ${(step512 / step16).toFixed(2)}× ` +
        `wall, ${(step512Cpu / step16Cpu).toFixed(2)}× CPU (≤ 3.5×)`,
    );
    console.log(
      `recomputing the prefix at ${contextLength - 1} tokens (a prefill): ` +
        `${prefillWall.toFixed(2)} ms wall / ${prefillCpu.toFixed(2)} ms CPU ` +
        `→ the cached step is ${(prefillWall / step512).toFixed(1)}× (wall) ` +
        `/ ${(prefillCpu / step512Cpu).toFixed(1)}× (CPU) faster (goal ≥ 20×)`,
    );
  }
  console.log(
    "\norigin CPU per request (ms; one stream's prompt and tokens): " +
      "prefill + decode steps + the rest (HTTP/SSE, scheduling, " +
      "sampling) = total; prefill work does not shrink with batching, so",
  );
  console.log(
    '"bound" = the ×1-stream per CPU-second ratio if the decode ' +
      "steps and the rest cost nothing at that concurrency:",
  );
  for (const { key: context } of SHAPES) {
    const part = (streams, key) =>
      median(results.get(`tp:${context}:${streams}`).map((r) => r.cpuPerStream[key]));
    const line = (streams) =>
      `${part(streams, "prefill").toFixed(2)} + ${part(streams, "decode").toFixed(2)} + ` +
      `${(part(streams, "total") - part(streams, "prefill") - part(streams, "decode")).toFixed(2)}` +
      ` = ${part(streams, "total").toFixed(2)}`;
    if (CONCURRENCY.includes(16))
      console.log(
        `  ${context.padStart(7)}: 1 stream ${line(1)};  16 streams ${line(16)};  ` +
          `bound at 16 ${(part(1, "total") / part(16, "prefill")).toFixed(2)}×`,
      );
  }
  if (httpThread !== undefined) {
    console.log(
      "\nthe decoder on its own thread (served) vs on the HTTP " +
        "thread (ORIGIN_DECODER_THREAD=false; onnxruntime-node's " +
        "run() is synchronous, so there every step",
    );
    console.log(
      "stalls the sockets and every SSE write the next step), same cells " +
        "interleaved: tokens/s end to end, origin tokens per CPU-second",
    );
    console.log(
      "  shape  streams  own thread tok/s  HTTP thread tok/s  " +
        "own/HTTP  ×1-stream own | HTTP   tok/CPU-s own | HTTP",
    );
    for (const { key: shape } of SHAPES) {
      for (const streams of HTTP_THREAD_STREAMS) {
        const m = (prefix, s, key) =>
          median(results.get(`${prefix}:${shape}:${s}`).map((r) => r[key]));
        const [own, http] = [
          m("tp", streams, "tokensPerSecond"),
          m("http", streams, "tokensPerSecond"),
        ];
        const ratio = (prefix) =>
          (m(prefix, streams, "tokensPerSecond") / m(prefix, 1, "tokensPerSecond")).toFixed(2);
        console.log(
          `${shape.padStart(7)}  ${String(streams).padStart(7)}  ` +
            `${own.toFixed(1).padStart(16)}  ${http.toFixed(1).padStart(17)}  ` +
            `${(own / http).toFixed(2).padStart(7)}×  ` +
            `${ratio("tp").padStart(10)}× | ${ratio("http")}×  ` +
            `${m("tp", streams, "tokensPerCpuSecond").toFixed(0).padStart(11)} ` +
            `| ${m("http", streams, "tokensPerCpuSecond").toFixed(0)}`,
        );
      }
    }
  }
  const at = (context, streams, key) =>
    median(results.get(`tp:${context}:${streams}`).map((r) => r[key])) /
    median(results.get(`tp:${context}:1`).map((r) => r[key]));
  for (const [key, label] of [
    ["tokensPerSecond", "aggregate, end to end"],
    ["tokensPerCpuSecond", "aggregate per CPU-second"],
    ["steadyTokensPerSecond", "steady state"],
    ["decodeTokensPerSecond", "decode steps"],
    ["decodeTokensPerCpuSecond", "decode steps per CPU-second"],
  ]) {
    if (!CONCURRENCY.includes(16)) break;
    console.log(
      `goals (${label}): 16 streams ` +
        `${SHAPES.map(
          (shape) => `at ${shape.key}: ${at(shape.key, 16, key).toFixed(2)}× (≥ ${goalOf(shape)}×)`,
        ).join("; ")}`,
    );
  }
} finally {
  await Promise.all([origin.stop(), exported?.stop(), httpThread?.stop()]);
}

// The engine alone (scripts/bench-origin-engine.ts, in-process: no HTTP, SSE or client), after
// the origins have stopped: how much of the end-to-end ratio the decode loop itself allows.
if (!options["no-engine"]) {
  // One engine run per number of new tokens (the script takes one), its cells keyed by shape.
  const lines = [...new Set(SHAPES.map((shape) => shape.newTokens))].flatMap((newTokens) => {
    const contexts = SHAPES.filter((shape) => shape.newTokens === newTokens).map(
      (shape) => shape.context,
    );
    const args = [
      "scripts/bench-origin-engine.ts",
      "--rounds",
      String(Math.max(ROUNDS, 3)),
      "--min-tokens",
      String(MIN_TOKENS),
      "--new-tokens",
      String(newTokens),
      "--contexts",
      contexts.join(","),
      "--concurrency",
      CONCURRENCY.join(","),
      "--model",
      MODEL,
      "--graph",
      graph,
    ];
    return execFileSync("node_modules/.bin/tsx", args, { encoding: "utf8", maxBuffer: 1 << 24 })
      .trim()
      .split("\n")
      .map((line) => ({ ...JSON.parse(line), shape: `${JSON.parse(line).context}/${newTokens}` }));
  });
  console.log(
    "\nthe engine alone, in-process (no HTTP/SSE, no client; scripts/bench-origin-engine.ts, " +
      "same cells and prompts, medians): tokens/s wall and per CPU-second;",
  );
  console.log(
    "origin CPU per request (ms) = prefill + decode steps + " +
      "the rest (scheduling, sampling, metrics, the event loop)",
  );
  console.log(
    "  shape  streams  tokens/s  ×1-stream  tokens/CPU-s  " +
      "×1-stream   CPU per request: prefill + steps + rest = total",
  );
  for (const { key: shape } of SHAPES) {
    const single = lines.find((line) => line.shape === shape && line.streams === 1);
    for (const line of lines.filter((entry) => entry.shape === shape)) {
      const { prefill, decode, total } = line.cpuPerStream;
      console.log(
        `${shape.padStart(7)}  ${String(line.streams).padStart(7)}  ` +
          `${line.tokensPerSecond.toFixed(1).padStart(8)}  ` +
          `${single ? (line.tokensPerSecond / single.tokensPerSecond).toFixed(2).padStart(8) : "     n/a"}` +
          `×  ${line.tokensPerCpuSecond.toFixed(1).padStart(12)}  ` +
          `${single ? (line.tokensPerCpuSecond / single.tokensPerCpuSecond).toFixed(2).padStart(8) : "     n/a"}` +
          `×   ${prefill.toFixed(2)} + ${decode.toFixed(2)} + ` +
          `${(total - prefill - decode).toFixed(2)} = ${total.toFixed(2)}`,
      );
    }
  }
}
