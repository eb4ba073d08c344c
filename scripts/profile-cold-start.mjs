#!/usr/bin/env node
// Where a cold start's CPU goes: a V8 CPU profile of the Worker isolate (the devtools inspector's
// Profiler domain, through `wrangler dev --inspector-port`) taken across the first requests after a
// fresh workerd start, summarised by self time per function and per script, and saved as a
// .cpuprofile (open it in Chrome devtools → Performance). Each request is profiled apart and
// summarised on its own, then all together. Usage: node scripts/profile-cold-start.mjs [--out
// cold-start.cpuprofile] [--interval 100] [--source bundle.js]
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { inspector } from "./lib/inspector.mjs";

const { values: options } = parseArgs({
  options: {
    out: { type: "string", default: "node_modules/.cache/cold-start.cpuprofile" },
    interval: { type: "string", default: "100" },
    top: { type: "string", default: "30" },
    "top-each": { type: "string", default: "8" },
    // Also save the bundle workerd runs here (to read the index.js lines the summary names).
    source: { type: "string" },
  },
});

const headers = { authorization: "Bearer profile-key", "content-type": "application/json" };
const REQUESTS = [
  ["isolate: GET /v2/health/live", (url) => fetch(`${url}/v2/health/live`)],
  [
    "fraud-gru ready (ORT init + session)",
    (url) => fetch(`${url}/v2/models/fraud-gru/ready`, { headers }),
  ],
  [
    "spam-classifier ready (session + tokenizer)",
    (url) => fetch(`${url}/v2/models/spam-classifier/ready`, { headers }),
  ],
  [
    "first OIP infer (300 ids in)",
    (url) =>
      fetch(`${url}/v2/models/spam-classifier/infer`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          inputs: [
            {
              name: "input_ids",
              datatype: "INT64",
              shape: [1, 300],
              data: Array.from({ length: 300 }, (_, i) => (i * 7919) % 5000),
            },
            {
              name: "attention_mask",
              datatype: "INT64",
              shape: [1, 300],
              data: Array.from({ length: 300 }, () => 1),
            },
          ],
        }),
      }),
  ],
  [
    "first /v1/classify",
    (url) =>
      fetch(`${url}/v1/classify`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          model: "spam-classifier",
          input: "Minutes of the design review are attached.",
        }),
      }),
  ],
  [
    "second /v1/classify",
    (url) =>
      fetch(`${url}/v1/classify`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          model: "spam-classifier",
          input: "Minutes of the design review are attached.",
        }),
      }),
  ],
];

const worker = await startWranglerDev({
  persistTo: ".wrangler/bench-state",
  vars: { API_KEYS: "profile-key" },
  inspector: true,
});
try {
  const session = await inspector(worker.inspectorUrl);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: Number(options.interval) });
  // One profile per request, so each request's own CPU is summarised apart.
  const profiles = [];
  for (const [name, request] of REQUESTS) {
    await session.send("Profiler.start");
    const started = performance.now();
    const response = await request(worker.url);
    await response.arrayBuffer();
    const wall = performance.now() - started;
    const { profile } = await session.send("Profiler.stop");
    profiles.push(profile);
    console.log(`\n${name.padEnd(46)} ${wall.toFixed(0).padStart(6)} ms  HTTP ${response.status}`);
    summarise(profile, Number(options["top-each"]));
  }
  if (options.source !== undefined) {
    // The bundle as workerd runs it, to read the lines the profile names (index.js:LINE).
    const scripts = [];
    session.onEvent("Debugger.scriptParsed", (params) => scripts.push(params));
    await session.send("Debugger.enable");
    const bundle = scripts.find((script) => script.url.endsWith("index.js"));
    if (bundle !== undefined)
      writeFileSync(
        options.source,
        (await session.send("Debugger.getScriptSource", { scriptId: bundle.scriptId }))
          .scriptSource,
      );
  }
  session.close();
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, JSON.stringify(merge(profiles)));
  console.log("\nall requests together:");
  summarise(merge(profiles), Number(options.top));
  console.log(`profile: ${options.out}`);
} finally {
  worker.stop();
}

/** The per-request profiles as one (their samples one after the other), for devtools. */
function merge(profiles) {
  const nodes = [];
  const samples = [];
  const timeDeltas = [];
  let offset = 0;
  for (const profile of profiles) {
    for (const node of profile.nodes)
      nodes.push({
        ...node,
        id: node.id + offset,
        children: node.children?.map((child) => child + offset),
      });
    samples.push(...profile.samples.map((id) => id + offset));
    // A profile's first delta counts from its own start: the gap between two profiles is no one's
    // time.
    timeDeltas.push(...profile.timeDeltas.map((delta, i) => (i === 0 && offset > 0 ? 0 : delta)));
    offset += Math.max(...profile.nodes.map((node) => node.id));
  }
  return {
    nodes,
    samples,
    timeDeltas,
    startTime: profiles[0]?.startTime ?? 0,
    endTime: profiles.at(-1)?.endTime ?? 0,
  };
}

function summarise(profile, top) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  profile.samples.forEach((id, i) =>
    self.set(id, (self.get(id) ?? 0) + (deltas[i + 1] ?? 0) / 1000),
  );
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
  console.log(`  CPU profile: ${total.toFixed(0)} ms sampled outside (idle)`);
  console.log("  self time by function:");
  for (const [name, ms] of [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .filter(([name]) => !name.startsWith("(idle)"))
    .slice(0, top))
    console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
  console.log("  self time by script:");
  for (const [name, ms] of [...byScript].sort((a, b) => b[1] - a[1]).slice(0, 10))
    console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
}
