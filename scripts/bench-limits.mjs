#!/usr/bin/env node
// Per-key limits' cost at the edge, side by side in one run against `wrangler dev` and the
// reference origin on loopback: the same requests with a stored key without limits ("off") and
// one with a request rate and token budgets ("on": its Durable Object counts each request, and
// each generation reserves and settles tokens). Interleaved in blocks, so a shared machine's
// noise falls on both alike. Latency p50/p99 per request, and workerd's main-thread CPU per
// request (where the isolates' JavaScript and the Durable Object run), with the differences.
// A generation's settlement rides on the key's next reservation; each block waits for the one
// its last request leaves to be sent alone, so every call to the object counts in its block;
// a third workload spaces its requests 300 ms apart, each settlement then a call of its own.
// `--servers` runs the same cells, one server after another, under `wrangler dev` as it starts
// ("dev"), under `wrangler dev` without its local trace collector, a streaming tail Worker that
// records the Worker's invocations (X_LOCAL_OBSERVABILITY=false: "dev-no-trace"), and as
// `wrangler deploy` bundles the Worker, in workerd alone ("bundled",
// scripts/lib/workerd-bundle.mjs).
// Usage: npm run bench:limits [-- --runs 400 --warmup-ms 2000 --servers dev,dev-no-trace,bundled]
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { startOrigin } from "./lib/origin.mjs";
import { summary } from "./lib/stats.mjs";
import { findWorkerd, mainThreadCpuMs } from "./lib/workerd-cpu.mjs";
import { startBundledWorker } from "./lib/workerd-bundle.mjs";
import { migratedState, startWranglerDev } from "./lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    runs: { type: "string", default: "400" },
    "warmup-ms": { type: "string", default: "2000" },
    servers: { type: "string", default: "dev,dev-no-trace,bundled" },
  },
});
const RUNS = Number(options.runs);
const WARMUP_MS = Number(options["warmup-ms"]);
const BLOCK = 25;
const SETTLED_MS = 400;
const SERVERS = {
  dev: "wrangler dev",
  "dev-no-trace": "wrangler dev, no trace collector",
  bundled: "deploy bundle in workerd alone",
};
const servers = options.servers.split(",");
for (const name of servers)
  if (!(name in SERVERS))
    throw new Error(`--servers: ${name} is not one of ${Object.keys(SERVERS)}`);

/** One server of `name` on the state in `state` (migrations applied), and its workerd pids. */
async function start(name, state, vars) {
  if (name === "bundled") {
    const worker = await startBundledWorker({ persistTo: state, vars });
    return { worker, workerd: [worker.pid] };
  }
  const traceCollector = name !== "dev-no-trace";
  const worker = await startWranglerDev({ persistTo: state, vars, traceCollector });
  return { worker, workerd: findWorkerd(worker.pid) ?? [] };
}

const origin = await startOrigin({});
console.log(
  `bench:limits — ${RUNS} requests per cell (a quarter 300 ms apart), blocks of ${BLOCK},` +
    ` ${WARMUP_MS} ms warm-up; the reference origin on loopback, one request at a time`,
);
try {
  for (const name of servers) await measure(name);
} finally {
  await origin.stop();
}

async function measure(name) {
  const state = migratedState("bench-limits-");
  const { worker, workerd } = await start(name, state, { ORIGIN_URL: origin.url });
  try {
    await cells(worker, workerd, SERVERS[name]);
  } finally {
    await worker.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

async function cells(worker, workerd, server) {
  const issue = async (limits) => {
    const response = await fetch(`${worker.url}/admin/keys`, {
      method: "POST",
      headers: { ...worker.headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench", scopes: ["generate", "classify"], limits }),
    });
    if (response.status !== 201) throw new Error(`${response.status} ${await response.text()}`);
    return (await response.json()).key;
  };
  const keys = {
    off: await issue({}),
    on: await issue({
      requests_per_minute: 1_000_000,
      tokens_per_minute: 1_000_000_000,
      tokens_per_day: 1_000_000_000,
    }),
  };
  const workloads = {
    "POST /tokenize (request rate: 1 DO call)": {
      path: "/tokenize",
      body: { model: "tiny-llm", prompt: "The old house" },
    },
    "POST /v1/completions, 1 token (rate, reserve, last settlement: 1 DO call)": {
      path: "/v1/completions",
      body: { model: "tiny-llm", prompt: "The old house", max_tokens: 1, temperature: 0 },
    },
    // A quarter of the runs: each waits out the settlement, which no reservation carries.
    "POST /v1/completions, 1 token, 300 ms apart (settlement alone: 2 DO calls)": {
      path: "/v1/completions",
      body: { model: "tiny-llm", prompt: "The old house", max_tokens: 1, temperature: 0 },
      runs: Math.max(1, Math.round(RUNS / 4)),
      pauseMs: 300,
    },
  };
  const call = async (key, { path, body }) => {
    const response = await fetch(`${worker.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  };
  console.log(
    `\n${server}\n` +
      "| workload | limits | p50 ms | p99 ms | workerd main-thread CPU ms/request |\n" +
      "| --- | --- | --- | --- | --- |",
  );
  for (const [label, workload] of Object.entries(workloads)) {
    const times = { off: [], on: [] };
    const cpu = { off: 0, on: 0 };
    for (const mode of ["off", "on"]) {
      const started = performance.now();
      while (performance.now() - started < WARMUP_MS) await call(keys[mode], workload);
    }
    const runs = workload.runs ?? RUNS;
    for (let start = 0; start < runs; start += BLOCK) {
      for (const mode of start % (2 * BLOCK) === 0 ? ["off", "on"] : ["on", "off"]) {
        const cpuBefore = mainThreadCpuMs(workerd);
        for (let i = start; i < Math.min(start + BLOCK, runs); i++) {
          const began = performance.now();
          await call(keys[mode], workload);
          times[mode].push(performance.now() - began);
          if (workload.pauseMs)
            await new Promise((resolve) => setTimeout(resolve, workload.pauseMs));
        }
        // A block's last settlement is sent alone 250 ms after it (SETTLE_DELAY_MS): counted
        // in its own block.
        await new Promise((resolve) => setTimeout(resolve, SETTLED_MS));
        cpu[mode] += mainThreadCpuMs(workerd) - cpuBefore;
      }
    }
    const rows = Object.fromEntries(
      ["off", "on"].map((mode) => [mode, { ...summary(times[mode]), cpu: cpu[mode] / runs }]),
    );
    for (const mode of ["off", "on"]) {
      const row = rows[mode];
      console.log(
        `| ${label} | ${mode} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ` +
          `${row.cpu.toFixed(3)} |`,
      );
    }
    console.log(
      `| ${label} | on − off | ${(rows.on.p50 - rows.off.p50).toFixed(2)} | ` +
        `${(rows.on.p99 - rows.off.p99).toFixed(2)} | ${(rows.on.cpu - rows.off.cpu).toFixed(3)} |`,
    );
  }
}
