#!/usr/bin/env node
// Where a fraud decision's CPU goes: a V8 CPU profile of the Worker isolate (devtools inspector,
// `wrangler dev --inspector-port`) across signed Stripe issuing_authorization.request events at
// C in flight, each sample charged to a stage by the functions on its stack (HTTP, signature,
// parsing, featurizing, Durable Object transaction, model, outbox / D1, garbage collection).
// --heap: what the decisions allocate instead (V8's sampling heap profiler, every object counted
// whether or not a collection took it since), in KB a decision by the same stages: what fills the
// young generation, whose collections promote what in-flight decisions hold.
// Usage: node scripts/fraud/profile-webhooks.mjs [--events 300 --concurrency 16 --interval 100
//   --top 25 --stage HTTP (the functions list: only that stage's) --bundled (the deploy bundle in
//   workerd alone, scripts/lib/workerd-bundle.mjs, instead of wrangler dev) --heap]
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { startBundledWorker } from "../lib/workerd-bundle.mjs";
import { freePort, startWranglerDev } from "../lib/wrangler-dev.mjs";
import { inspector } from "../lib/inspector.mjs";
import { issuingAuthorizationEvent, stripeSigned } from "../lib/stripe-issuing.mjs";

const { values: options } = parseArgs({
  options: {
    events: { type: "string", default: "300" },
    concurrency: { type: "string", default: "16" },
    interval: { type: "string", default: "100" },
    top: { type: "string", default: "25" },
    stage: { type: "string" },
    bundled: { type: "boolean", default: false },
    heap: { type: "boolean", default: false },
  },
});
const EVENTS = Number(options.events);
const SECRET = "whsec_profile";

/**
 * The stages, tried innermost frame first: the first stage one of whose patterns names a frame
 * (function name or script) on the sample's stack takes the sample.
 */
const STAGES = [
  // explain: the model's inputs and outputs around its runs (ORT's own JS glue is minified in
  // its package, so its frames are found by what called them; featurizing, inside explain, is
  // found first); runQueued and nextTurn: the dynamic batcher's run and wait; batch and
  // scoredRows: the stacked inputs.
  [
    "model (ORT run, its inputs and outputs)",
    /wasm-function|ort-runtime|onnxruntime|\bInferenceSession\b|\bsession\.run\b|\bexplain\b|\brunQueued\b|\bnextTurn\b|\bbatch\b|\bscoredRows\b/,
  ],
  ["featurizing", /\bbuildWindows\b|\bfeaturize|\bencodeDigits|\bwindows\b/],
  // d1-api: the D1 binding's own JS, whose continuations run with no frame of ours above them.
  ["outbox / D1", /\bflush\b|\bcopyToD1\b|\balarm\b|\bstatementFor\b|d1-api/],
  ["Durable Object transaction", /\bCardHistory\b|\bprepare\b|\bcommit\b|transactionSync/],
  ["rules and reasons", /\bruleInputs\b|\bapplyRules\b|\breasonsFor\b|\bdescribe\d*\b/],
  ["signature", /\bverifyStripe\b|constructEvent|computeSignature|SubtleCrypto|\bverifyHeader/],
  ["parsing (zod, mapping)", /safeParse|\bparse\b|\bsourceOf\b|\bfromIssuingAuthorization\b|_zod/],
];

const run = Date.now().toString(36);
const payload = (i) => JSON.stringify(issuingAuthorizationEvent({ run, i, cardPrefix: "profile" }));

async function deliver(url, i) {
  const body = payload(i);
  const response = await fetch(`${url}/v1/webhooks/stripe`, {
    method: "POST",
    headers: stripeSigned(body, SECRET),
    body,
  });
  const answer = await response.json();
  if (answer.metadata?.fraud_score === undefined) throw new Error(JSON.stringify(answer));
}

const state = ".wrangler/profile-state";
execFileSync(
  "npx",
  ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
  { stdio: "ignore" },
);
const vars = { STRIPE_WEBHOOK_SECRET: SECRET };
const worker = options.bundled
  ? // Unminified, so the stages can find the bundle's own functions by name; on the Worker's
    // own socket, as bench:fraud's deploy bundle is reached.
    await startBundledWorker({
      persistTo: state,
      vars,
      inspectorPort: await freePort(),
      minify: false,
      direct: true,
    })
  : await startWranglerDev({ persistTo: state, vars, inspector: true });
try {
  for (let i = 0; i < 30; i++) await deliver(worker.url, 100_000 + i);
  const session = await inspector(worker.inspectorUrl);
  if (options.heap) {
    await session.send("HeapProfiler.enable");
    await session.send("HeapProfiler.startSampling", {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else {
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: Number(options.interval) });
    await session.send("Profiler.start");
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(options.concurrency) }, async () => {
      while (next < EVENTS) await deliver(worker.url, next++);
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 500)); // the outbox alarms after the last
  if (options.heap) {
    const { profile } = await session.send("HeapProfiler.stopSampling");
    session.close();
    summarise(flatHeap(profile), {
      what: "JS heap allocated",
      unit: "KB",
      scale: 1 / 1024,
      how: "V8's sampling heap profiler, one sample every 512 bytes",
    });
  } else {
    const { profile } = await session.send("Profiler.stop");
    session.close();
    // Each sample weighs the time until the next one.
    const weights = profile.samples.map((id, i) => [id, (profile.timeDeltas[i + 1] ?? 0) / 1000]);
    summarise(
      { nodes: profile.nodes, weights },
      {
        what: "CPU",
        unit: "ms",
        scale: 1,
        how: `V8 sampling every ${options.interval} µs`,
      },
    );
  }
} finally {
  await worker.stop();
}

/** The sampling heap profile's tree as a CPU profile's flat nodes, each weighing its own bytes. */
function flatHeap(profile) {
  const nodes = [];
  const weights = [];
  const visit = (node) => {
    nodes.push({ ...node, children: node.children.map((child) => child.id) });
    if (node.selfSize > 0) weights.push([node.id, node.selfSize]);
    for (const child of node.children) visit(child);
  };
  visit(profile.head);
  return { nodes, weights };
}

/**
 * Each weight (a CPU sample's ms, an allocation's bytes) charged to its node's stage and function,
 * per decision.
 */
function summarise(profile, { what, unit, scale, how }) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const frame = (node) =>
    `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.split("/").at(-1)}`;
  /** The nearest function of our bundle above a sample's frame (whose code it is). */
  const caller = (id) => {
    for (let at = parent.get(id); at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node.callFrame.url.endsWith("index.js") && node.callFrame.functionName)
        return node.callFrame.functionName;
    }
    return "-";
  };
  const stageOf = new Map();
  const stage = (id) => {
    if (stageOf.has(id)) return stageOf.get(id);
    const node = byId.get(id);
    const name = node.callFrame.functionName;
    let found;
    if (name === "(idle)" || name === "(program)") found = name;
    else if (name === "(garbage collector)") found = "garbage collection";
    else {
      for (let at = id; at !== undefined && found === undefined; at = parent.get(at)) {
        const text = frame(byId.get(at));
        found = STAGES.find(([, pattern]) => pattern.test(text))?.[0];
      }
    }
    found ??= "HTTP (routing, middleware, request and response)";
    stageOf.set(id, found);
    return found;
  };
  const stages = new Map();
  const functions = new Map();
  for (const [id, amount] of profile.weights) {
    const weight = amount * scale;
    stages.set(stage(id), (stages.get(stage(id)) ?? 0) + weight);
    if (options.stage !== undefined && !stage(id).startsWith(options.stage)) continue;
    const name = `${frame(byId.get(id))} ← ${caller(id)}`;
    functions.set(name, (functions.get(name) ?? 0) + weight);
  }
  const busy = [...stages].filter(([name]) => name !== "(idle)");
  const total = busy.reduce((sum, [, amount]) => sum + amount, 0);
  console.log(
    `\nWorker isolate ${what} per decision by stage (${EVENTS} signed Issuing authorizations, ` +
      `${options.concurrency} in flight, ${how}):`,
  );
  console.log(`| stage | ${unit} per decision | share |\n|---|---|---|`);
  for (const [name, amount] of busy.sort((a, b) => b[1] - a[1]))
    console.log(
      `| ${name} | ${(amount / EVENTS).toFixed(3)} | ${((100 * amount) / total).toFixed(0)}% |`,
    );
  console.log(`| total | ${(total / EVENTS).toFixed(3)} | 100% |`);
  console.log(`\n${what} by function (its own, not its callees'), ${unit} per decision:`);
  for (const [name, amount] of [...functions]
    .filter(([name]) => !name.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(options.top)))
    console.log(`${(amount / EVENTS).toFixed(3).padStart(8)}  ${name}`);
}
