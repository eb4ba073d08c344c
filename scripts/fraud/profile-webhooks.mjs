#!/usr/bin/env node
// Where a fraud decision's CPU goes: a V8 CPU profile of the Worker isolate (devtools inspector,
// `wrangler dev --inspector-port`) across signed Stripe issuing_authorization.request events at
// C in flight, each sample charged to a stage by the functions on its stack (HTTP, signature,
// parsing, featurizing, Durable Object transaction, model, outbox / D1, garbage collection).
// Usage: node scripts/fraud/profile-webhooks.mjs [--events 300 --concurrency 16 --interval 100
//   --top 25 --stage HTTP (the functions list: only that stage's) --bundled (the deploy bundle in
//   workerd alone, scripts/lib/workerd-bundle.mjs, instead of wrangler dev)]
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
  },
});
const EVENTS = Number(options.events);
const SECRET = "whsec_profile";

/**
 * The stages, tried innermost frame first: the first stage one of whose patterns names a frame
 * (function name or script) on the sample's stack takes the sample.
 */
const STAGES = [
  [
    "model (ORT run)",
    /wasm-function|ort-runtime|onnxruntime|\bInferenceSession\b|\bsession\.run\b/,
  ],
  ["featurizing", /\bbuildWindows\b|\bfeaturize|\bencodeDigits|\bwindows\b/],
  // d1-api: the D1 binding's own JS, whose continuations run with no frame of ours above them.
  ["outbox / D1", /\bflush\b|\bcopyToD1\b|\balarm\b|\bstatementFor\b|d1-api/],
  ["Durable Object transaction", /\bCardHistory\b|\bprepare\b|\bcommit\b|transactionSync/],
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
  ? await startBundledWorker({ persistTo: state, vars, inspectorPort: await freePort() })
  : await startWranglerDev({ persistTo: state, vars, inspector: true });
try {
  for (let i = 0; i < 30; i++) await deliver(worker.url, 100_000 + i);
  const session = await inspector(worker.inspectorUrl);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: Number(options.interval) });
  await session.send("Profiler.start");
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(options.concurrency) }, async () => {
      while (next < EVENTS) await deliver(worker.url, next++);
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 500)); // the outbox alarms after the last
  const { profile } = await session.send("Profiler.stop");
  session.close();
  summarise(profile);
} finally {
  await worker.stop();
}

function summarise(profile) {
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
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    stages.set(stage(id), (stages.get(stage(id)) ?? 0) + ms);
    if (options.stage !== undefined && !stage(id).startsWith(options.stage)) return;
    const name = `${frame(byId.get(id))} ← ${caller(id)}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  });
  const busy = [...stages].filter(([name]) => name !== "(idle)");
  const total = busy.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(
    `\nWorker isolate CPU per decision by stage (${EVENTS} signed Issuing authorizations, ` +
      `${options.concurrency} in flight, V8 sampling every ${options.interval} µs):`,
  );
  console.log("| stage | ms per decision | share |\n|---|---|---|");
  for (const [name, ms] of busy.sort((a, b) => b[1] - a[1]))
    console.log(`| ${name} | ${(ms / EVENTS).toFixed(3)} | ${((100 * ms) / total).toFixed(0)}% |`);
  console.log(`| total | ${(total / EVENTS).toFixed(3)} | 100% |`);
  console.log("\nself time by function, ms per decision:");
  for (const [name, ms] of [...functions]
    .filter(([name]) => !name.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(options.top)))
    console.log(`${(ms / EVENTS).toFixed(3).padStart(8)}  ${name}`);
}
