#!/usr/bin/env node
// Classification benchmark, side by side in one run on the same held-out texts:
//   native    onnxruntime-node, FP32 and INT8, one thread, in process
//   wasm      onnxruntime-web in Node (the same WASM engine the Worker runs), INT8, one thread
//   workerd   the Worker under `wrangler dev` over loopback: OIP infer (ids in) and
//             /v1/classify (text in: tokenize + run + softmax), p50/p99 of the round trip
//   origin    the reference GPU origin (origin/, onnxruntime-node on CPU here) over loopback:
//             OIP infer (ids in), what a model with `runtime: "origin"` costs beyond the edge
//   cold      first /v1/classify after a fresh workerd start (ORT init, sha256, session,
//             tokenizer),
//             wall and workerd CPU, phase by phase, beside wrangler dev's start-up and the CPU
//             the Worker's own start-up costs (workerd CPU until ready beyond an empty Worker's)
//   bundle    the deploy bundle's gzip size (scripts/bundle-size.mjs)
// Usage: npm run bench [-- --texts 200 --restarts 3] [-- --cold-only] [-- --baseline main]
//   --cold-only      only the cold starts (no warm, native or origin timings, no bundle build)
//   --baseline REF   also cold-start a checkout of git REF, alternating with this one
import { execFileSync, execSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { unstable_readConfig } from "wrangler";
import { loadSplits } from "./spam/dataset.mjs";
import { percentile, summary, timeInterleaved } from "./lib/stats.mjs";
import { startOrigin } from "./lib/origin.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { findWorkerd, mainThreadCpuMs, processCpuMs } from "./lib/workerd-cpu.mjs";

const { values: options } = parseArgs({
  options: {
    texts: { type: "string", default: "200" },
    restarts: { type: "string", default: "3" },
    "cold-only": { type: "boolean", default: false },
    baseline: { type: "string" },
  },
});
const TEXTS = Number(options.texts);
const RESTARTS = Number(options.restarts);
const WARMUP = 20; // requests before timing the Worker
const WARMUP_MS = 2000; // per engine, before timing session.run
const BLOCK = 20;
const dir = "models/spam-classifier";
const manifest = JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8"));

// The edge's preprocessing: first maxChars characters, first maxLength ids
// (src/tokenizers/batch.ts). The tokenizer's source JSON: the Worker's compact tokenizer.bin gives
// the same ids (test/unit/tokenizers/tokenizer-parity.test.ts).
const tokenizer = new Tokenizer(
  JSON.parse(
    readFileSync(`${dir}/${manifest.tokenizer.source?.file ?? manifest.tokenizer.file}`, "utf8"),
  ),
  {},
);
const texts = loadSplits()
  .test.slice(0, TEXTS)
  .map((row) => row.text);
const ids = texts.map((text) =>
  tokenizer
    .encode(text.slice(0, manifest.tokenizer.maxChars), { add_special_tokens: false })
    .ids.slice(0, manifest.tokenizer.maxLength),
);
const meanTokens = ids.reduce((sum, row) => sum + row.length, 0) / ids.length;

/** One session.run on text i's ids, batch 1. */
const runner = (ort, session) => (i) => {
  const row = ids[i];
  const shape = [1, row.length];
  return session.run({
    input_ids: new ort.Tensor("int64", BigInt64Array.from(row, BigInt), shape),
    attention_mask: new ort.Tensor("int64", new BigInt64Array(row.length).fill(1n), shape),
  });
};

const nativeOptions = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
};
ortWeb.env.wasm.numThreads = 1;
const results = {};
// The three in-process engines take turns in blocks of BLOCK texts (scripts/lib/stats.mjs).
if (!options["cold-only"])
  [results.nativeFp32, results.nativeInt8, results.wasmInt8] = await timeInterleaved(
    [
      runner(
        ortNode,
        await ortNode.InferenceSession.create(
          `${dir}/${manifest.graphs.reference.file}`,
          nativeOptions,
        ),
      ),
      runner(
        ortNode,
        await ortNode.InferenceSession.create(
          `${dir}/${manifest.graphs.model.file}`,
          nativeOptions,
        ),
      ),
      runner(
        ortWeb,
        await ortWeb.InferenceSession.create(readFileSync(`${dir}/${manifest.graphs.model.file}`), {
          executionProviders: ["wasm"],
          graphOptimizationLevel: "all",
        }),
      ),
    ],
    { inputs: ids.length, block: BLOCK, warmupMs: WARMUP_MS },
  );

// --- the Worker in workerd, over loopback -------------------------------------------------
const startWorker = () =>
  startWranglerDev({ persistTo: ".wrangler/bench-state", vars: { API_KEYS: "bench-key" } });

const headers = { authorization: "Bearer bench-key", "content-type": "application/json" };
const classify = (url, text) =>
  fetch(`${url}/v1/classify`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: manifest.name, input: text }),
  });
const infer = (url, row, key = "bench-key") =>
  fetch(`${url}/v2/models/${manifest.name}/infer`, {
    method: "POST",
    headers: { ...headers, authorization: `Bearer ${key}` },
    body: JSON.stringify({
      inputs: [
        { name: "input_ids", shape: [1, row.length], datatype: "INT64", data: row },
        {
          name: "attention_mask",
          shape: [1, row.length],
          datatype: "INT64",
          data: row.map(() => 1),
        },
      ],
    }),
  });

async function timeRequests(send, inputs) {
  for (const input of inputs.slice(0, WARMUP)) await (await send(input)).arrayBuffer();
  const times = [];
  for (const input of inputs) {
    const started = performance.now();
    const response = await send(input);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    times.push(performance.now() - started);
  }
  return summary(times);
}

// The reference origin: the same OIP request, served natively (ORT's default intra-op threads).
if (!options["cold-only"]) {
  let origin;
  try {
    origin = await startOrigin({ ORIGIN_API_KEY: "origin-bench-key" });
    results.originInfer = await timeRequests(
      (row) => infer(origin.url, row, "origin-bench-key"),
      ids,
    );
  } finally {
    await origin?.stop();
  }
}

// Cold starts, each in a fresh `wrangler dev`: wall time of each request and the CPU the
// workerd process spent on it (all threads, /proc schedstat; less inflated than wall time
// on a shared machine), plus wrangler dev's start-up (wall) and workerd's CPU until ready
// (its own start, the Worker's top-level evaluation and the WASM module's compilation).
// With --baseline REF the same starts run alternately on a checkout of REF (git archive).
const checkouts = [{ name: "this checkout", cwd: undefined }];
if (options.baseline !== undefined)
  checkouts.push({ name: `baseline ${options.baseline}`, cwd: baselineCheckout(options.baseline) });

function baselineCheckout(ref) {
  const dir = resolve("node_modules/.cache/bench-baseline");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execSync(`git archive ${JSON.stringify(ref)} | tar -x -C ${JSON.stringify(dir)}`);
  symlinkSync(resolve("node_modules"), join(dir, "node_modules"));
  return dir;
}

async function coldStart(cwd, requests, config = undefined) {
  const worker = await startWranglerDev({
    persistTo: ".wrangler/bench-state",
    vars: { API_KEYS: "bench-key" },
    cwd,
    config,
  });
  try {
    const workerd = findWorkerd(worker.pid);
    const result = {
      startMs: worker.startMs,
      startCpuMs: processCpuMs(workerd),
      startMainCpuMs: mainThreadCpuMs(workerd),
      wall: [],
      cpu: [],
    };
    for (const [name, request] of requests) {
      const cpuBefore = processCpuMs(workerd);
      const started = performance.now();
      const response = await request(worker.url);
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
      result.wall.push(performance.now() - started);
      result.cpu.push(processCpuMs(workerd) - cpuBefore);
    }
    return result;
  } finally {
    worker.stop();
  }
}

// Where a cold start goes, phase by phase on other fresh workers (each phase is the first
// request of its kind; timers inside the Worker are frozen, so these are round trips):
// the isolate's first request, ORT's init with the first (small) session, a second
// session with its tokenizer, the session's first run (OIP infer: no tokenizer, no
// /v1/classify route), the first /v1/classify (its route, request schema and tokenizer
// seen for the first time), then a warm request.
// With preloaded models (manifest `preload`) the two readiness phases find them loaded.
const PHASES = [
  ["isolate: first request (GET /v2/health/live)", (url) => fetch(`${url}/v2/health/live`)],
  [
    "fraud-gru ready (ORT init + session unless preloaded)",
    (url) => fetch(`${url}/v2/models/fraud-gru/ready`, { headers }),
  ],
  [
    "spam ready (session + tokenizer unless preloaded)",
    (url) => fetch(`${url}/v2/models/spam-classifier/ready`, { headers }),
  ],
  ["first run in a request (OIP infer, ids in)", (url) => infer(url, ids[0])],
  ["first /v1/classify (route, tokenizer, a second run)", (url) => classify(url, texts[0])],
  ["second /v1/classify (warm)", (url) => classify(url, texts[0])],
];
const FIRST = [["first /v1/classify", (url) => classify(url, texts[0])]];
const cold = checkouts.map(() => ({ first: [], phases: [] }));
// An empty Worker (same compatibility settings, one fetch handler) started the same way: what
// workerd and wrangler dev cost before any of our code, so the Worker's own start-up (bundle
// compilation, the top level: ORT's start and the preloaded models) is the difference.
const emptyWorker = createEmptyWorker();
const emptyStarts = [];
for (let i = 0; i < RESTARTS; i++) {
  for (const [k, checkout] of checkouts.entries()) {
    cold[k].first.push(await coldStart(checkout.cwd, FIRST));
    cold[k].phases.push(await coldStart(checkout.cwd, PHASES));
  }
  emptyStarts.push(await coldStart(undefined, [], emptyWorker));
}

function createEmptyWorker() {
  const dir = resolve("node_modules/.cache/bench-empty-worker");
  mkdirSync(dir, { recursive: true });
  const { compatibility_date, compatibility_flags } = unstable_readConfig({
    config: "wrangler.jsonc",
  });
  writeFileSync(join(dir, "index.js"), 'export default { fetch: () => new Response("ok") };\n');
  const config = { name: "bench-empty", main: "index.js", compatibility_date, compatibility_flags };
  writeFileSync(join(dir, "wrangler.json"), `${JSON.stringify(config, null, 2)}\n`);
  return join(dir, "wrangler.json");
}
if (!options["cold-only"]) {
  const worker = await startWorker();
  try {
    results.workerdHealth = await timeRequests(() => fetch(`${worker.url}/v2/health/live`), ids);
    results.workerdInfer = await timeRequests((row) => infer(worker.url, row), ids);
    results.workerdClassify = await timeRequests((text) => classify(worker.url, text), texts);
  } finally {
    worker.stop();
  }
}

const bundleLine = options["cold-only"]
  ? undefined
  : execFileSync("node", ["scripts/bundle-size.mjs"], { encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1);

// --- report ---------------------------------------------------------------------------------
const ms = (value) => value.toFixed(2).padStart(8);
const row = (name, stats, note = "") =>
  console.log(`| ${name.padEnd(44)} | ${ms(stats.p50)} | ${ms(stats.p99)} | ${note}`);
if (!options["cold-only"]) {
  console.log(
    `\n${texts.length} held-out SpamAssassin texts, batch ` +
      `1, mean ${meanTokens.toFixed(0)} tokens, one thread; ms`,
  );
  console.log(`| ${"path".padEnd(44)} |      p50 |      p99 | ratio (p50)`);
  console.log(`|${"-".repeat(46)}|----------|----------|------------`);
  row("onnxruntime-node native FP32 (session.run)", results.nativeFp32, "1.00× (baseline)");
  row(
    "onnxruntime-node native INT8 (session.run)",
    results.nativeInt8,
    `${(results.nativeInt8.p50 / results.nativeFp32.p50).toFixed(2)}× native FP32`,
  );
  row(
    "onnxruntime-web WASM INT8 in Node (session.run)",
    results.wasmInt8,
    `${(results.wasmInt8.p50 / results.nativeFp32.p50).toFixed(2)}× native FP32, ` +
      `${(results.wasmInt8.p50 / results.nativeInt8.p50).toFixed(2)}× native INT8`,
  );
  row("workerd: GET /v2/health/live (HTTP floor)", results.workerdHealth);
  row(
    "workerd: POST /v2/models/…/infer (ids → logits)",
    results.workerdInfer,
    `${(results.workerdInfer.p50 / results.nativeInt8.p50).toFixed(2)}× native INT8 incl. HTTP`,
  );
  row(
    "workerd: POST /v1/classify (text → labels)",
    results.workerdClassify,
    `${(results.workerdClassify.p50 / results.nativeFp32.p50).toFixed(2)}× ` +
      "native FP32 incl. HTTP + tokenize",
  );
  row(
    "reference origin: POST /v2/models/…/infer",
    results.originInfer,
    `${(results.originInfer.p50 / results.nativeInt8.p50).toFixed(2)}× native INT8 incl. HTTP`,
  );
}
const p50 = (values) => percentile(values, 50);
for (const [k, checkout] of checkouts.entries()) {
  const { first, phases } = cold[k];
  const firstWall = first.map((r) => r.wall[0]);
  console.log(`\ncold start (${checkout.name}, p50 over ${RESTARTS} fresh workerd starts):`);
  console.log(
    `  first /v1/classify after a fresh workerd: ${p50(firstWall).toFixed(0)} ` +
      `ms wall (${firstWall.map((v) => v.toFixed(0)).join(", ")}), workerd CPU ` +
      `${p50(first.map((r) => r.cpu[0])).toFixed(0)} ms`,
  );
  const starts = [...first, ...phases];
  const startCpu = p50(starts.map((r) => r.startCpuMs));
  const emptyCpu = p50(emptyStarts.map((r) => r.startCpuMs));
  const mainCpu =
    p50(starts.map((r) => r.startMainCpuMs)) - p50(emptyStarts.map((r) => r.startMainCpuMs));
  console.log(
    `  wrangler dev start-up: ${p50(starts.map((r) => r.startMs)).toFixed(0)} ` +
      `ms wall; workerd CPU until ready ${startCpu.toFixed(0)} ms`,
  );
  console.log(
    "  the Worker's own start-up (bundle + top level: ORT, preloaded " +
      `models): ${(startCpu - emptyCpu).toFixed(0)} ms CPU beyond an ` +
      `empty Worker's ${emptyCpu.toFixed(0)} ms, of which the main ` +
      `threads ${mainCpu.toFixed(0)} ms (the rest: V8's helper threads)`,
  );
  console.log(`  ${"phase".padEnd(52)} ${"wall ms".padStart(8)} ${"CPU ms".padStart(8)}`);
  for (const [index, [name]] of PHASES.entries()) {
    console.log(
      `  ${name.padEnd(52)} ${p50(phases.map((r) => r.wall[index]))
        .toFixed(0)
        .padStart(8)} ${p50(phases.map((r) => r.cpu[index]))
        .toFixed(0)
        .padStart(8)}`,
    );
  }
}
if (checkouts.length === 2) {
  const ratio = (pick) => p50(cold[1].first.map(pick)) / p50(cold[0].first.map(pick));
  console.log(
    "\nfirst /v1/classify, baseline ÷ this checkout: " +
      `wall ×${ratio((r) => r.wall[0]).toFixed(2)}, ` +
      `workerd CPU ×${ratio((r) => r.cpu[0]).toFixed(2)}`,
  );
  const startCpu = (k) => p50([...cold[k].first, ...cold[k].phases].map((r) => r.startCpuMs));
  const delta = startCpu(0) - startCpu(1);
  console.log(
    "start-up, this checkout − baseline: workerd CPU until " +
      `ready ${delta >= 0 ? "+" : ""}${delta.toFixed(0)} ms`,
  );
}
if (results.workerdClassify !== undefined)
  console.log(`warm /v1/classify p50: ${results.workerdClassify.p50.toFixed(2)} ms`);
if (bundleLine !== undefined) console.log(bundleLine);
