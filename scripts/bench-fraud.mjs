#!/usr/bin/env node
// Fraud benchmark, side by side in one run:
//   model     batch 16 (IBM's fixed batch), one thread, same machine, engines interleaved in
//             blocks of 25 runs: our GRU (INT8 and FP32) in onnxruntime-web WASM (the edge engine)
//             and native; IBM's published GRU in WASM and native (onnxruntime-node), FP32 — as
//             ratios to our FP32 native (the project's goal) and to IBM's GRU native
//   webhook   signed Stripe issuing_authorization.request events (signed before the clock
//             starts) against `wrangler dev` on loopback at each concurrency: webhook-to-decision
//             latency p50/p99 (Durable Object history and decision included), decisions per
//             second and workerd CPU per decision, beside the floor: the same signed POST of an
//             event that is only acknowledged (customer.created: HTTP, signature, parsing; no
//             decision), so "above floor" is what deciding costs; the floor split by process
//             (wrangler's proxy workerd, the Worker's, wrangler's Node, the load generator); the
//             mean batch of the fraud model's explain batcher (its /metrics counters around the
//             decisions; "-" for code without it).
//             --bundled: the same against the deploy bundle in workerd alone (no dev proxy, no
//             trace collector: scripts/lib/workerd-bundle.mjs) on the Worker's own socket, as a
//             deployed Worker is reached, in turns with wrangler dev. --entry (with --bundled): the
//             deploy bundle a second time behind Miniflare's entry Worker (how the deploy bundle
//             was reached until 2026-12-01: an isolate of its own on the Worker's thread).
//             --state-dir DIR: the Workers' local state (SQLite files) there, e.g. on a tmpfs.
//             --gc (with --bundled): each deploy bundle's workerd runs with V8's --trace-gc-nvp,
//             and the Worker isolate's collections over the whole run are printed: the full ones
//             (each a pause of every decision in flight, what set them off, the sizes after and
//             the limit) and the young-generation ones; then, cell by cell, the full ones that
//             fell while its decisions were in flight and what each decision left for them.
//             --baseline REF: the same for REF's code (git archive into .wrangler/, this
//             node_modules) in alternating rounds, printed side by side as ratios
// Usage: npm run bench:fraud [-- --events 400 --concurrency 1,16,32 --runs 300 --warmup-ms 2000
//   --baseline 45576d7 --rounds 2 --skip-model --bundled --entry --gc --state-dir /dev/shm/bench-fraud]
//   (../shared/external/ibm-ccf for IBM's rows)
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { tabFormerLikeInput } from "./lib/seeded-input.mjs";
import { summary, timeInterleaved } from "./lib/stats.mjs";
import { formatGc, fullPauses, gcSummary, retained } from "./lib/gc-trace.mjs";
import { startBundledWorker } from "./lib/workerd-bundle.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { load, meters, post, SECRET, signedRequests } from "./fraud/webhook-load.mjs";

const { values: options } = parseArgs({
  options: {
    events: { type: "string", default: "400" },
    concurrency: { type: "string", default: "1,16,32" },
    baseline: { type: "string" },
    rounds: { type: "string", default: "2" },
    "skip-model": { type: "boolean", default: false },
    bundled: { type: "boolean", default: false },
    entry: { type: "boolean", default: false },
    gc: { type: "boolean", default: false },
    "state-dir": { type: "string", default: ".wrangler" },
    runs: { type: "string", default: "300" },
    "warmup-ms": { type: "string", default: "2000" },
  },
});
const EVENTS = Number(options.events);
const CONCURRENCY = options.concurrency.split(",").map(Number);
const ROUNDS = Number(options.rounds);
const RUNS = Number(options.runs);
const WARMUP_MS = Number(options["warmup-ms"]);
const BLOCK = 25;
const BATCH = 16;
const IBM = "../shared/external/ibm-ccf/ccf_gru_static_tf2onnx_OS_new.onnx";
const manifest = JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8"));

const input = (width) => tabFormerLikeInput(7, BATCH, width, 7);

const native = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
};
ortWeb.env.wasm.numThreads = 1;
const web = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };
const width = manifest.features.count;
let rows = [];
if (!options["skip-model"]) rows = await modelRows();

async function modelRows() {
  const ours = { name: "transactions", data: input(width), shape: [7, BATCH, width] };
  const entries = [
    {
      label: "ours INT8, onnxruntime-web WASM",
      ort: ortWeb,
      session: await ortWeb.InferenceSession.create(
        readFileSync(`models/fraud-gru/${manifest.graphs.model.file}`),
        web,
      ),
      ...ours,
    },
    {
      label: "ours INT8, onnxruntime-node native",
      ort: ortNode,
      session: await ortNode.InferenceSession.create(
        `models/fraud-gru/${manifest.graphs.model.file}`,
        native,
      ),
      ...ours,
    },
    {
      label: "ours FP32, onnxruntime-web WASM",
      ort: ortWeb,
      session: await ortWeb.InferenceSession.create(
        readFileSync(`models/fraud-gru/${manifest.graphs.reference.file}`),
        web,
      ),
      ...ours,
    },
    {
      label: "ours FP32, onnxruntime-node native",
      ort: ortNode,
      session: await ortNode.InferenceSession.create(
        `models/fraud-gru/${manifest.graphs.reference.file}`,
        native,
      ),
      ...ours,
    },
  ];
  if (existsSync(IBM)) {
    const ibm = { name: "input", data: input(220), shape: [7, BATCH, 220] };
    entries.push(
      {
        label: "IBM GRU FP32, onnxruntime-web WASM",
        ort: ortWeb,
        session: await ortWeb.InferenceSession.create(readFileSync(IBM), web),
        ...ibm,
      },
      {
        label: "IBM GRU FP32, onnxruntime-node native",
        ort: ortNode,
        session: await ortNode.InferenceSession.create(IBM, native),
        ...ibm,
      },
    );
  }
  // The engines take turns in blocks of BLOCK runs after a warm-up each (scripts/lib/stats.mjs).
  for (const entry of entries)
    entry.feeds = { [entry.name]: new entry.ort.Tensor("float32", entry.data, entry.shape) };
  const summaries = await timeInterleaved(
    entries.map((entry) => () => entry.session.run(entry.feeds)),
    { inputs: RUNS, block: BLOCK, warmupMs: WARMUP_MS },
  );
  return entries.map((entry, k) => [entry.label, summaries[k]]);
}

// --- webhooks against wrangler dev (and the deploy bundle) -----------------------------------
/** The checkouts to compare: REF's code unpacked beside this one (sharing node_modules), then ours. */
function checkouts() {
  const list = [];
  if (options.baseline !== undefined) {
    const commit = execFileSync("git", ["rev-parse", "--short", options.baseline])
      .toString()
      .trim();
    const dir = resolve(`.wrangler/bench-baseline-${commit}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${commit} | tar -x -C ${dir}`);
    symlinkSync(resolve("node_modules"), `${dir}/node_modules`);
    list.push({ name: `baseline ${commit}`, cwd: dir });
  }
  list.push({ name: "this checkout", cwd: process.cwd() });
  return list;
}

const BEHIND_ENTRY = "deploy bundle behind Miniflare's entry";
const HARNESSES = [
  "wrangler dev",
  ...(options.bundled ? ["deploy bundle"] : []),
  ...(options.bundled && options.entry ? [BEHIND_ENTRY] : []),
];
const bundled = (harness) => harness !== "wrangler dev";
/** After the decisions, how long before their CPU is read: the card's alarm copies to D1 1–2 s
 * after a commit, and that copy is part of what a decision costs. */
const SETTLE_MS = 2500;

/** One Worker per checkout and harness, each with its own state and migrations applied. */
async function startServers(targets) {
  const servers = [];
  for (const target of targets)
    for (const harness of HARNESSES) {
      const state = resolve(options["state-dir"], `bench-state-${servers.length}`);
      rmSync(state, { recursive: true, force: true });
      execFileSync(
        "npx",
        ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
        { stdio: "ignore", cwd: target.cwd },
      );
      const vars = { STRIPE_WEBHOOK_SECRET: SECRET, API_KEYS: "bench" };
      const start = { persistTo: state, vars, cwd: target.cwd };
      const server =
        harness === "wrangler dev"
          ? await startWranglerDev(start)
          : await startBundledWorker({
              ...start,
              traceGc: options.gc,
              direct: harness === "deploy bundle",
            });
      const cpu = meters(server, bundled(harness) ? "deploy bundle" : harness);
      servers.push({ target, harness, server, state, cpu });
      // Warm-up: payments after every measured one (2023).
      for (const request of signedRequests("decision", 200_000, 20))
        await post(server.url, request);
    }
  return servers;
}

const targets = checkouts();
let servers = [];
try {
  servers = await startServers(targets);
  const empty = () => ({ latencies: [], ms: 0, cpu: {}, floor: {}, floorCount: 0, gcSpans: [] });
  const add = (into, cpuMs) => {
    for (const [k, v] of Object.entries(cpuMs)) into[k] = (into[k] ?? 0) + v;
  };
  // results[c][s]: every round's events at concurrency c for server s, pooled.
  const results = CONCURRENCY.map(() => servers.map(empty));
  let offset = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [c, concurrency] of CONCURRENCY.entries()) {
      // Alternate which server goes first, so none always meets the warmer machine.
      const order = servers.map((_, s) => s);
      if ((round + c) % 2 === 1) order.reverse();
      for (const s of order) {
        const { server, cpu } = servers[s];
        const floor = await load(
          server.url,
          signedRequests("floor", offset, EVENTS),
          concurrency,
          cpu,
        );
        const decisions = signedRequests("decision", offset, EVENTS);
        const batchesBefore = await explainBatches(server);
        // With --gc: which of workerd's collection lines were printed while these were in flight.
        const gcLineCount = () => server.gcLines?.().length ?? 0;
        const span = [gcLineCount(), 0];
        const measured = await load(server.url, decisions, concurrency, cpu, SETTLE_MS, () => {
          span[1] = gcLineCount();
        });
        offset += EVENTS;
        const into = results[c][s];
        const batchesAfter = await explainBatches(server);
        if (batchesBefore !== undefined && batchesAfter !== undefined) {
          into.batchRuns = (into.batchRuns ?? 0) + batchesAfter.runs - batchesBefore.runs;
          into.batchCalls = (into.batchCalls ?? 0) + batchesAfter.calls - batchesBefore.calls;
        }
        into.gcSpans.push(span);
        add(into.floor, floor.cpuMs);
        into.floorCount += floor.latencies.length;
        into.latencies.push(...measured.latencies);
        into.ms += measured.ms;
        add(into.cpu, measured.cpuMs);
      }
    }
  }
  printWebhooks(results);
  if (options.gc) printCollections(results);
} finally {
  for (const { server, state } of servers) {
    await server.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

/**
 * The fraud model's explain batcher so far (GET /metrics: runs and the calls they answered), read
 * outside the measured requests; undefined for code without it.
 */
async function explainBatches(server) {
  const response = await fetch(`${server.url}/metrics`, { headers: server.headers });
  const text = await response.text();
  const counter = (name) =>
    text.match(new RegExp(`^${name}\\{batcher="fraud-gru\\.explain"\\} (\\d+)$`, "m"))?.[1];
  const [runs, calls] = [counter("edge_batch_runs_total"), counter("edge_batch_calls_total")];
  return runs === undefined || calls === undefined
    ? undefined
    : { runs: Number(runs), calls: Number(calls) };
}

function printWebhooks(results) {
  console.log(
    `\nStripe issuing_authorization.request → {approved}, ${EVENTS} events × ${ROUNDS} rounds ` +
      "per cell over 50 cards, signed before the clock starts, on loopback, servers in " +
      `alternating turns; CPU read ${SETTLE_MS} ms after the last answer (the D1 copy counts):`,
  );
  const header = [
    "in flight",
    "harness",
    "checkout",
    "p50 ms",
    "p99 ms",
    "decisions/s",
    "workerd CPU ms/decision",
    "floor CPU ms/request",
    "decision above floor, CPU ms",
    "Node CPU ms/decision (load generator + wrangler)",
    "mean explain batch",
  ];
  const both = targets.length === 2;
  if (both)
    header.push("p99 ratio (new/old)", "throughput ratio", "CPU ratio", "above-floor ratio");
  const table = (head) => `| ${head.join(" | ")} |\n|${head.map(() => "---").join("|")}|`;
  console.log(table(header));
  const cellsOf = (c) =>
    results[c].map(({ latencies, ms, cpu, floor, floorCount, batchRuns, batchCalls }) => ({
      ...summary(latencies),
      perSecond: latencies.length / (ms / 1000),
      cpu: cpu.workerd / latencies.length,
      floor: floor.workerd / floorCount,
      node: ((cpu.generator ?? 0) + (cpu.wrangler ?? 0)) / latencies.length,
      batch: batchRuns ? (batchCalls / batchRuns).toFixed(1) : "-",
    }));
  for (const [c, concurrency] of CONCURRENCY.entries()) {
    const cells = cellsOf(c);
    for (const harness of HARNESSES) {
      const of = servers.flatMap((server, s) => (server.harness === harness ? [s] : []));
      const old = cells[of[0]];
      for (const [k, s] of of.entries()) {
        const cell = cells[s];
        const ratio = (value) => (k === 0 ? "" : `${value.toFixed(2)}×`);
        const row = [
          concurrency,
          harness,
          servers[s].target.name,
          cell.p50.toFixed(1),
          cell.p99.toFixed(1),
          cell.perSecond.toFixed(0),
          cell.cpu.toFixed(2),
          cell.floor.toFixed(2),
          (cell.cpu - cell.floor).toFixed(2),
          cell.node.toFixed(2),
          cell.batch,
        ];
        if (both)
          row.push(
            ratio(cell.p99 / old.p99),
            ratio(cell.perSecond / old.perSecond),
            ratio(cell.cpu / old.cpu),
            ratio((cell.cpu - cell.floor) / (old.cpu - old.floor)),
          );
        console.log(`| ${row.join(" | ")} |`);
      }
    }
  }
  // Where the floor goes: the processes a request crosses, CPU ms per acknowledged request.
  console.log("\nThe floor by process, CPU ms per acknowledged request:");
  console.log(
    table([
      "in flight",
      "harness",
      "checkout",
      "wrangler's proxy workerd",
      "the Worker's workerd",
      "wrangler's Node",
      "load generator (Node)",
    ]),
  );
  for (const [c, concurrency] of CONCURRENCY.entries())
    for (const [s, { harness, target }] of servers.entries()) {
      const { floor, floorCount } = results[c][s];
      const per = (ms) => (ms === undefined ? "-" : (ms / floorCount).toFixed(2));
      const worker = floor.worker ?? floor.workerd;
      const proxy = floor.worker === undefined ? undefined : floor.workerd - floor.worker;
      console.log(
        `| ${concurrency} | ${harness} | ${target.name} | ${per(proxy)} | ${per(worker)} | ` +
          `${per(floor.wrangler)} | ${per(floor.generator)} |`,
      );
    }
}

/**
 * The Worker isolate's collections in each deploy bundle, warm-up and floor requests included;
 * then, cell by cell, the full ones that fell while its decisions were in flight.
 */
function printCollections(results) {
  console.log(
    "\nThe Worker isolate's collections over the whole run (V8 --trace-gc-nvp; warm-up, floor " +
      "and every cell included; a full collection stops every isolate of the process). V8 " +
      "starts one when its old generation or its global count (the old generation plus what it " +
      "counts outside its heap: workerd's C++ objects, ArrayBuffers such as ORT's WASM memory, " +
      "compiled WASM code) reaches its limit:",
  );
  console.log(
    "| harness | checkout | full collections | their pauses, ms | what set them off | " +
      "V8 heap after, MB | global count after, MB | global limit, MB | young collections | " +
      "their pauses in all, ms | longest, ms |\n|---|---|---|---|---|---|---|---|---|---|---|",
  );
  // Each bundle's lines and its summary (the Worker's isolate among them), read once.
  const traced = new Map();
  for (const [s, { harness, server }] of servers.entries()) {
    if (!bundled(harness)) continue;
    const lines = server.gcLines();
    traced.set(s, { lines, summary: gcSummary(lines) });
  }
  for (const [s, { summary: gcOf }] of traced) {
    const gc = formatGc(gcOf);
    const { harness, target } = servers[s];
    console.log(
      `| ${harness} | ${target.name} | ${gc.full} | ${gc.fullPausesMs} | ${gc.reasons} | ` +
        `${gc.liveAfterMb} | ${gc.globalAfterMb} | ${gc.globalLimitMb} | ${gc.young} | ` +
        `${gc.youngTotalMs} | ${gc.youngMaxMs} |`,
    );
  }
  // A cell's p99 is one of its slowest answers: one full collection among them can set it. What
  // each decision leaves behind sets how soon the next one comes.
  console.log(
    "\nThe Worker isolate while a cell's decisions were in flight: its full collections, and " +
      "what each decision left for them to free (growth between collections, KB):\n" +
      "| in flight | harness | checkout | full collections | their pauses, ms | " +
      "left per decision, V8 heap | left per decision, outside it | p99 ms |\n" +
      "|---|---|---|---|---|---|---|---|",
  );
  for (const [c, concurrency] of CONCURRENCY.entries())
    for (const [s, { lines, summary: gcOf }] of traced) {
      const spans = results[c][s].gcSpans.map(([from, to]) => lines.slice(from, to));
      const pauses = spans.flatMap((span) => fullPauses(span, gcOf.isolate));
      const left = spans.map((span) => retained(span, gcOf.isolate));
      const decided = results[c][s].latencies.length;
      const perDecision = (key) =>
        (left.reduce((sum, part) => sum + part[key], 0) / decided / 1024).toFixed(1);
      const p99 = summary(results[c][s].latencies).p99.toFixed(1);
      const listed = pauses.map((ms) => ms.toFixed(0)).join(", ") || "-";
      console.log(
        `| ${concurrency} | ${servers[s].harness} | ${servers[s].target.name} | ` +
          `${pauses.length} | ${listed} | ${perDecision("heap")} | ${perDecision("outside")} | ` +
          `${p99} |`,
      );
    }
}

const p50Of = (prefix) => rows.find(([name]) => name.startsWith(prefix))?.[1].p50;
const ibmNative = p50Of("IBM GRU FP32, onnxruntime-node");
const ownNative = p50Of("ours FP32, onnxruntime-node");
const ratio = (p50, base) => (base ? `${(p50 / base).toFixed(2)}×` : "-");
if (rows.length > 0) {
  console.log(
    `\nmodel latency, batch ${BATCH}, window 7, one thread, ` +
      `engines interleaved in blocks of ${BLOCK} runs; ms`,
  );
  console.log(
    "| model and runtime | p50 | p99 | p50 / ours FP32 " +
      "native | p50 / IBM GRU native |\n|---|---|---|---|---|",
  );
  for (const [name, { p50, p99 }] of rows)
    console.log(
      `| ${name} | ${p50.toFixed(3)} | ${p99.toFixed(3)} | ` +
        `${ratio(p50, ownNative)} | ${ratio(p50, ibmNative)} |`,
    );
}
