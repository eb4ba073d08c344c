#!/usr/bin/env node
// Fraud benchmark, side by side in one run:
//   model     batch 16 (IBM's fixed batch), one thread, same machine, engines interleaved in
//             blocks of 25 runs: our GRU (INT8 and FP32) in onnxruntime-web WASM (the edge engine)
//             and native; IBM's published GRU in WASM and native (onnxruntime-node), FP32 — as
//             ratios to our FP32 native (the project's goal) and to IBM's GRU native
//   webhook   signed Stripe issuing_authorization.request events against `wrangler dev`
//             on loopback with C in flight: webhook-to-decision latency p50/p99 (D1 write and
//             Durable Object history included) and decisions per second
// Usage: npm run bench:fraud [-- --events 400 --concurrency 8 --runs 300 --warmup-ms 2000] (needs
// ../shared/external/ibm-ccf for IBM's rows)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import Stripe from "stripe";
import { tabFormerLikeInput } from "./lib/seeded-input.mjs";
import { summary, timeInterleaved } from "./lib/stats.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    events: { type: "string", default: "400" },
    concurrency: { type: "string", default: "8" },
    runs: { type: "string", default: "300" },
    "warmup-ms": { type: "string", default: "2000" },
  },
});
const EVENTS = Number(options.events);
const CONCURRENCY = Number(options.concurrency);
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
const rows = entries.map((entry, k) => [entry.label, summaries[k]]);

// --- webhooks against wrangler dev ----------------------------------------------------------
const SECRET = "whsec_bench";
const state = ".wrangler/bench-state";
execFileSync(
  "npx",
  ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
  { stdio: "ignore" },
);
const worker = await startWranglerDev({
  persistTo: state,
  vars: { STRIPE_WEBHOOK_SECRET: SECRET, API_KEYS: "bench" },
});

const run = Date.now().toString(36);
function event(i) {
  const card = `bench_${run}_${i % 50}`;
  return {
    id: `evt_${run}_${i}`,
    object: "event",
    type: "issuing_authorization.request",
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `iauth_${run}_${i}`,
        created: Date.UTC(2019, 10, 1) / 1000 + i * 600,
        amount: 0,
        currency: "usd",
        authorization_method: i % 3 === 0 ? "online" : "chip",
        card: { id: card },
        pending_request: { amount: 500 + ((i * 7919) % 90_000), currency: "usd" },
        merchant_data: {
          category_code: "5411",
          city: "Richmond",
          state: "VA",
          postal_code: "23229",
          country: "US",
          name: "GROCER",
          network_id: String(-2607170448330360210n + BigInt(i % 40)),
        },
      },
    },
  };
}

async function deliver(i) {
  const payload = JSON.stringify(event(i));
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  const started = performance.now();
  const response = await fetch(`${worker.url}/v1/webhooks/stripe`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: payload,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`webhook answered ${response.status}`);
  return performance.now() - started;
}

let webhook;
try {
  for (let i = 0; i < 20; i++) await deliver(EVENTS + i); // warm-up: isolate, ORT, DO and D1
  const latencies = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) latencies.push(await deliver(next++));
    }),
  );
  webhook = { ...summary(latencies), perSecond: EVENTS / ((performance.now() - started) / 1000) };
} finally {
  worker.stop();
}

const p50Of = (prefix) => rows.find(([name]) => name.startsWith(prefix))?.[1].p50;
const ibmNative = p50Of("IBM GRU FP32, onnxruntime-node");
const ownNative = p50Of("ours FP32, onnxruntime-node");
const ratio = (p50, base) => (base ? `${(p50 / base).toFixed(2)}×` : "-");
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
console.log(
  `\nStripe issuing_authorization.request → {approved}, ${EVENTS} events ` +
    `over 50 cards, ${CONCURRENCY} in flight, wrangler dev on loopback:`,
);
console.log(
  `p50 ${webhook.p50.toFixed(1)} ms, p99 ` +
    `${webhook.p99.toFixed(1)} ms, ${webhook.perSecond.toFixed(0)} ` +
    "decisions/s (D1 write + Durable Object history per decision)",
);
