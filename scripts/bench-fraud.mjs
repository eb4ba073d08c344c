#!/usr/bin/env node
// Fraud benchmark, side by side in one run:
//   model     batch 16 (IBM's fixed batch), one thread, same machine, engines interleaved in
//             blocks of 25 runs: our GRU (INT8 and FP32) in onnxruntime-web WASM (the edge engine)
//             and native; IBM's published GRU in WASM and native (onnxruntime-node), FP32 — as
//             ratios to our FP32 native (the project's goal) and to IBM's GRU native
//   webhook   signed Stripe issuing_authorization.request events against `wrangler dev`
//             on loopback at each concurrency: webhook-to-decision latency p50/p99 (Durable
//             Object history and decision included), decisions per second and workerd CPU per
//             decision, beside the floor: the same signed POST of an event that is only
//             acknowledged (customer.created: HTTP, signature, parsing; no decision), so
//             "above floor" is what deciding costs; with --baseline REF the same for REF's code (git archive into
//             .wrangler/, this node_modules) in alternating rounds, printed side by side as ratios
// Usage: npm run bench:fraud [-- --events 400 --concurrency 1,16,32 --runs 300 --warmup-ms 2000
//   --baseline 45576d7 --rounds 2 --skip-model] (needs ../shared/external/ibm-ccf for IBM's rows)
import { execFileSync, execSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import Stripe from "stripe";
import { tabFormerLikeInput } from "./lib/seeded-input.mjs";
import { summary, timeInterleaved } from "./lib/stats.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { issuingAuthorizationEvent, stripeSigned } from "./lib/stripe-issuing.mjs";

const { values: options } = parseArgs({
  options: {
    events: { type: "string", default: "400" },
    concurrency: { type: "string", default: "1,16,32" },
    baseline: { type: "string" },
    rounds: { type: "string", default: "2" },
    "skip-model": { type: "boolean", default: false },
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

// --- webhooks against wrangler dev ----------------------------------------------------------
const SECRET = "whsec_bench";

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

/** CPU seconds (user + system) of every workerd process under `pid`, from /proc. */
function workerdCpuMs(pid) {
  const tick = 1000 / 100; // USER_HZ
  const children = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      children.set(Number(entry), {
        parent: Number(fields[1]),
        comm,
        cpu: (Number(fields[11]) + Number(fields[12])) * tick,
      });
    } catch {}
  }
  const under = (p) => {
    for (let q = p; q > 1; q = children.get(q)?.parent ?? 0) if (q === pid) return true;
    return false;
  };
  let total = 0;
  for (const [p, { comm, cpu }] of children)
    if (comm.startsWith("workerd") && under(p)) total += cpu;
  return total;
}

const run = Date.now().toString(36);
const event = (i) => issuingAuthorizationEvent({ run, i });

/** A signed event the webhook verifies, parses and acknowledges without deciding anything. */
function acknowledgedOnly(i) {
  return {
    id: `evt_${run}_ack_${i}`,
    object: "event",
    type: "customer.created",
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: `cus_${run}_${i}`, object: "customer" } },
  };
}

/** Posts a signed event; its latency in ms, once the whole answer has arrived. */
async function postSigned(worker, stripeEvent, check) {
  const payload = JSON.stringify(stripeEvent);
  const headers = stripeSigned(payload, SECRET);
  const started = performance.now();
  const response = await fetch(`${worker.url}/v1/webhooks/stripe`, {
    method: "POST",
    headers,
    body: payload,
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
  check?.(body);
  return performance.now() - started;
}

const deliverFloor = (worker, i) => postSigned(worker, acknowledgedOnly(i));

const deliver = (worker, i) =>
  postSigned(worker, event(i), (body) => {
    if (body.metadata?.fraud_score === undefined)
      throw new Error(`not scored: ${JSON.stringify(body)}`);
  });

/** EVENTS events at `concurrency` in flight: latencies, wall time and workerd CPU. */
async function load(worker, concurrency, offset, send = deliver) {
  const latencies = [];
  let next = 0;
  const cpuBefore = workerdCpuMs(worker.pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < EVENTS) latencies.push(await send(worker, offset + next++));
    }),
  );
  return {
    latencies,
    ms: performance.now() - started,
    cpuMs: workerdCpuMs(worker.pid) - cpuBefore,
  };
}

const targets = checkouts();
const workers = [];
try {
  for (const target of targets) {
    const state = resolve(`.wrangler/bench-state-${workers.length}`);
    execFileSync(
      "npx",
      ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
      { stdio: "ignore", cwd: target.cwd },
    );
    const worker = await startWranglerDev({
      persistTo: state,
      vars: { STRIPE_WEBHOOK_SECRET: SECRET, API_KEYS: "bench" },
      cwd: target.cwd,
    });
    workers.push(worker);
    for (let i = 0; i < 20; i++) await deliver(worker, 200_000 + i); // warm-up (2023, after every measured event)
  }
  // results[c][k]: every round's events at concurrency c for checkout k, pooled.
  const results = CONCURRENCY.map(() =>
    targets.map(() => ({ latencies: [], ms: 0, cpuMs: 0, floorCpuMs: 0, floorCount: 0 })),
  );
  let offset = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [c, concurrency] of CONCURRENCY.entries()) {
      // Alternate which checkout goes first, so neither always meets the warmer machine.
      const order = targets.map((_, k) => k);
      if ((round + c) % 2 === 1) order.reverse();
      for (const k of order) {
        const floor = await load(workers[k], concurrency, offset, deliverFloor);
        const measured = await load(workers[k], concurrency, offset);
        offset += EVENTS;
        const into = results[c][k];
        into.floorCpuMs += floor.cpuMs;
        into.floorCount += floor.latencies.length;
        into.latencies.push(...measured.latencies);
        into.ms += measured.ms;
        into.cpuMs += measured.cpuMs;
      }
    }
  }
  printWebhooks(results);
} finally {
  for (const worker of workers) worker.stop();
}

function printWebhooks(results) {
  console.log(
    `\nStripe issuing_authorization.request → {approved}, ${EVENTS} events × ${ROUNDS} rounds ` +
      "per cell over 50 cards, wrangler dev on loopback, checkouts in alternating turns:",
  );
  const header = [
    "in flight",
    "checkout",
    "p50 ms",
    "p99 ms",
    "decisions/s",
    "workerd CPU ms/decision",
    "floor CPU ms/request",
    "decision above floor, CPU ms",
  ];
  const both = targets.length === 2;
  if (both)
    header.push("p99 ratio (new/old)", "throughput ratio", "CPU ratio", "above-floor ratio");
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const [c, concurrency] of CONCURRENCY.entries()) {
    const cells = results[c].map(({ latencies, ms, cpuMs, floorCpuMs, floorCount }) => ({
      ...summary(latencies),
      perSecond: latencies.length / (ms / 1000),
      cpu: cpuMs / latencies.length,
      floor: floorCpuMs / floorCount,
    }));
    for (const [k, cell] of cells.entries()) {
      const row = [
        concurrency,
        targets[k].name,
        cell.p50.toFixed(1),
        cell.p99.toFixed(1),
        cell.perSecond.toFixed(0),
        cell.cpu.toFixed(2),
        cell.floor.toFixed(2),
        (cell.cpu - cell.floor).toFixed(2),
      ];
      if (both) {
        const [old] = cells;
        row.push(
          k === 0 ? "" : `${(cell.p99 / old.p99).toFixed(2)}×`,
          k === 0 ? "" : `${(cell.perSecond / old.perSecond).toFixed(2)}×`,
          k === 0 ? "" : `${(cell.cpu / old.cpu).toFixed(2)}×`,
          k === 0 ? "" : `${((cell.cpu - cell.floor) / (old.cpu - old.floor)).toFixed(2)}×`,
        );
      }
      console.log(`| ${row.join(" | ")} |`);
    }
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
