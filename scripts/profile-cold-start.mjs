#!/usr/bin/env node
// Where a cold start's CPU goes: a V8 CPU profile of the Worker isolate (the devtools
// inspector's Profiler domain, through `wrangler dev --inspector-port`) taken across the
// first requests after a fresh workerd start, summarised by self time per function and per
// script, and saved as a .cpuprofile (open it in Chrome devtools → Performance).
// Usage: node scripts/profile-cold-start.mjs [--out cold-start.cpuprofile] [--interval 100]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: { out: { type: "string", default: "node_modules/.cache/cold-start.cpuprofile" }, interval: { type: "string", default: "100" }, top: { type: "string", default: "30" } },
});

async function inspector(url) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let nextId = 0;
  const pending = new Map();
  socket.on("message", (raw) => {
    const message = JSON.parse(raw.toString());
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, (message) => (message.error ? reject(new Error(message.error.message)) : resolve(message.result)));
      socket.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => socket.close() };
}

const headers = { authorization: "Bearer profile-key", "content-type": "application/json" };
const REQUESTS = [
  ["isolate: GET /v2/health/live", (url) => fetch(`${url}/v2/health/live`)],
  ["fraud-gru ready (ORT init + session)", (url) => fetch(`${url}/v2/models/fraud-gru/ready`, { headers })],
  ["spam-classifier ready (session + tokenizer)", (url) => fetch(`${url}/v2/models/spam-classifier/ready`, { headers })],
  ["first /v1/classify", (url) => fetch(`${url}/v1/classify`, { method: "POST", headers, body: JSON.stringify({ model: "spam-classifier", input: "Minutes of the design review are attached." }) })],
  ["second /v1/classify", (url) => fetch(`${url}/v1/classify`, { method: "POST", headers, body: JSON.stringify({ model: "spam-classifier", input: "Minutes of the design review are attached." }) })],
];

const worker = await startWranglerDev({ persistTo: ".wrangler/bench-state", vars: { API_KEYS: "profile-key" }, inspector: true });
try {
  const session = await inspector(worker.inspectorUrl);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: Number(options.interval) });
  await session.send("Profiler.start");
  for (const [name, request] of REQUESTS) {
    const started = performance.now();
    const response = await request(worker.url);
    await response.arrayBuffer();
    console.log(`${name.padEnd(46)} ${(performance.now() - started).toFixed(0).padStart(6)} ms  HTTP ${response.status}`);
  }
  const { profile } = await session.send("Profiler.stop");
  session.close();
  writeFileSync(options.out, JSON.stringify(profile));
  summarise(profile);
  console.log(`profile: ${options.out}`);
} finally {
  worker.stop();
}

function summarise(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (deltas[i + 1] ?? 0) / 1000));
  const byFunction = new Map();
  const byScript = new Map();
  let total = 0;
  for (const [id, ms] of self) {
    const { callFrame } = byId.get(id);
    const script = callFrame.url.split("/").slice(-2).join("/") || "(native)";
    const name = `${callFrame.functionName || "(anonymous)"} ${script}:${callFrame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    byScript.set(script, (byScript.get(script) ?? 0) + ms);
    if (callFrame.functionName !== "(idle)") total += ms;
  }
  console.log(`\nCPU profile: ${total.toFixed(0)} ms sampled outside (idle)`);
  console.log("self time by function:");
  for (const [name, ms] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(options.top))) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
  console.log("self time by script:");
  for (const [name, ms] of [...byScript].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
}
