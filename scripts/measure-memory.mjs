#!/usr/bin/env node
// Memory of one Worker isolate, per model, as V8's heap snapshot counts it (devtools inspector):
// a snapshot begins with a full collection and lists everything left, so its sum is what the
// isolate holds live: JS objects (the script's source included), ArrayBuffer contents (ORT's WASM
// linear memory, model and tokenizer files) and compiled WASM code. Read idle after the models
// load, and once a second under N concurrent connections; the JS heap's used size before
// collection (garbage included) is sampled every 50 ms beside it, printed, not checked. Each row
// runs in a fresh `wrangler dev`, so a row holds only what its models load. An isolate gets
// 128 MB for all of it.
//
// Usage: npm run memory [-- --seconds 5 --connections 64]
//        npm run memory -- --check docs/memory.md   # exit 1 if a figure exceeds its line's ceiling
import { readFileSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { encode as encodePng } from "fast-png";
import jpeg from "jpeg-js";
import { inspector } from "./lib/inspector.mjs";
import { issuingAuthorizationEvent, stripeSigned } from "./lib/stripe-issuing.mjs";
import { migratedState, startWranglerDev } from "./lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "64" },
    check: { type: "string" },
    // Measure only the rows whose name contains this text (e.g. --only digit).
    only: { type: "string" },
  },
});
const SECONDS = Number(options.seconds);
const CONNECTIONS = Number(options.connections);
const MB = 1024 * 1024;

const post = (path, body) => ({
  path,
  init: {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  },
});
const classify = post("/v1/classify", {
  model: "spam-classifier",
  input: [
    "Minutes of the design review are attached.",
    "URGENT: you have WON $1,000,000, click here to claim your prize today",
  ],
});
const merchant = {
  id: "-2607170448330360210",
  city: "Richmond",
  state: "VA",
  zip: "23229",
  mcc: "5411",
};
const fraudScore = post("/v1/fraud/score", {
  accounts: [
    {
      history: [
        {
          id: "t1",
          card_id: "card_1",
          timestamp: "2019-09-30T18:12:00Z",
          amount: 42.1,
          currency: "USD",
          method: "chip",
          merchant,
        },
      ],
      transaction: {
        id: "t2",
        card_id: "card_1",
        timestamp: "2019-10-01T03:02:00Z",
        amount: 1999,
        currency: "USD",
        method: "online",
        merchant: { id: "9120044177342239866", mcc: "5732" },
      },
    },
  ],
});

// Signed Stripe Issuing authorizations over 50 cards, each decided in its card's Durable Object
// (history, the model with its attribution rows, the rules, the commit and the D1 copy).
const WEBHOOK_SECRET = "whsec_memory";
let authorizations = 0;
function issuingAuthorization() {
  const payload = JSON.stringify(
    issuingAuthorizationEvent({ run: "memory", i: authorizations++, cardPrefix: "ic" }),
  );
  return {
    path: "/v1/webhooks/stripe",
    init: { method: "POST", headers: stripeSigned(payload, WEBHOOK_SECRET), body: payload },
  };
}

// Images for the digit classifier: a 28x28 PNG digit (a bar of ink) and a 640x480 JPEG photo of
// dark ink on light paper (decoded, inverted, fitted into 20x20 at the edge).
const bar = Uint8Array.from({ length: 28 * 28 }, (_, i) =>
  i % 28 >= 12 && i % 28 <= 15 && i >= 4 * 28 && i < 24 * 28 ? 255 : 0,
);
const digitPng = encodePng({ width: 28, height: 28, data: bar, depth: 8, channels: 1 });
const photo = Uint8Array.from({ length: 640 * 480 * 4 }, (_, i) => {
  const pixel = i >> 2;
  const x = pixel % 640;
  const y = Math.floor(pixel / 640);
  return i % 4 === 3 ? 255 : x > 300 && x < 340 && y > 100 && y < 380 ? 40 : 235;
});
const digitJpeg = jpeg.encode({ data: photo, width: 640, height: 480 }, 85).data;
const rawImage = (bytes, type) => ({
  path: "/v1/classify?model=digit-classifier",
  init: { method: "POST", headers: { "content-type": type }, body: bytes },
});
const classifyPng = rawImage(digitPng, "image/png");
const classifyJpeg = rawImage(digitJpeg, "image/jpeg");

/** One row each of docs/memory.md's table: which models it loads and the requests that load it. */
const ROWS = [
  // What every isolate holds once started: ORT and the models marked `preload`.
  {
    name: "isolate at start-up (spam-classifier and fraud-gru preloaded)",
    models: [],
    requests: [{ path: "/v2/health/live" }],
  },
  { name: "spam-classifier (INT8 + tokenizer)", models: ["spam-classifier"], requests: [classify] },
  { name: "fraud-gru (INT8)", models: ["fraud-gru"], requests: [fraudScore] },
  {
    name: "fraud decisions: signed Stripe events decided in card objects (attribution, rules)",
    models: ["fraud-gru"],
    requests: [issuingAuthorization],
  },
  {
    name: "digit-classifier (INT8, 28x28 PNG + 640x480 JPEG decoding)",
    models: ["digit-classifier"],
    requests: [classifyPng, classifyJpeg],
  },
  {
    name: "all edge models",
    models: ["spam-classifier", "fraud-gru", "digit-classifier"],
    requests: [classify, fraudScore, classifyPng, classifyJpeg],
  },
];

/**
 * A heap snapshot's objects summed by kind (bytes): ArrayBuffer contents and compiled WASM code
 * (V8 lists both as native nodes) apart from the JS heap's own objects.
 */
function liveSizes({ snapshot, nodes, strings }) {
  const fields = snapshot.meta.node_fields;
  const [selfSize, name, type] = ["self_size", "name", "type"].map((f) => fields.indexOf(f));
  const native = snapshot.meta.node_types[0].indexOf("native");
  const sizes = { js: 0, buffers: 0, wasmCode: 0 };
  for (let i = 0; i < nodes.length; i += fields.length) {
    const bytes = nodes[i + selfSize];
    const label = nodes[i + type] === native ? strings[nodes[i + name]] : "";
    if (label === "system / JSArrayBufferData") sizes.buffers += bytes;
    else if (label.startsWith("system / CppGCManaged (WasmNativeModule)")) sizes.wasmCode += bytes;
    else sizes.js += bytes;
  }
  return { ...sizes, total: sizes.js + sizes.buffers + sizes.wasmCode };
}

/** The inspector session's two readings: the JS heap's used size, and the live isolate. */
async function isolateMemory(url) {
  const session = await inspector(url);
  let chunks = [];
  session.onEvent("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => chunks.push(chunk));
  return {
    heapUsed: async () => (await session.send("Runtime.getHeapUsage")).usedSize,
    // The live isolate from a heap snapshot (HeapProfiler.collectGarbage does not return in
    // workerd; the used size read after a snapshot would count what requests allocate since).
    live: async () => {
      chunks = [];
      await session.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      const snapshot = JSON.parse(chunks.join(""));
      chunks = [];
      return liveSizes(snapshot);
    },
    close: session.close,
  };
}

/** `request`: a path and init, or a function making one per call (each event is new). */
async function send(server, request) {
  const { path, init } = typeof request === "function" ? request() : request;
  const response = await fetch(`${server.url}${path}`, {
    ...init,
    headers: { ...init?.headers, ...server.headers },
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
}

/**
 * CONNECTIONS loops sending the row's requests for SECONDS while the isolate is sampled: the JS
 * heap's used size every 50 ms (garbage included), and what is live once a second while the
 * requests are in flight (the snapshot with the largest total).
 */
async function load(server, requests, heap) {
  const until = performance.now() + SECONDS * 1000;
  let usedPeak = 0;
  let livePeak;
  let sent = 0;
  const sampler = (async () => {
    let nextLive = performance.now() + 1000;
    while (performance.now() < until) {
      usedPeak = Math.max(usedPeak, await heap.heapUsed());
      if (performance.now() >= nextLive) {
        const live = await heap.live();
        if (livePeak === undefined || live.total > livePeak.total) livePeak = live;
        nextLive = performance.now() + 1000;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, connection) => {
      for (let i = connection; performance.now() < until; i++, sent++)
        await send(server, requests[i % requests.length]);
    }),
  );
  await sampler;
  return { usedPeak, livePeak, sent };
}

async function measure(row) {
  // The webhooks need D1's schema, as `npm start` applies it.
  const persistTo = migratedState("memory-");
  const dev = await startWranglerDev({
    persistTo,
    vars: { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET },
    inspector: true,
  });
  const heap = await isolateMemory(dev.inspectorUrl);
  try {
    for (const model of row.models) {
      const response = await fetch(`${dev.url}/v2/models/${model}/ready`, {
        headers: dev.headers,
      });
      if (response.status !== 200)
        throw new Error(`${model} is not ready: ${await response.text()}`);
    }
    for (const request of row.requests) for (let i = 0; i < 10; i++) await send(dev, request);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idle = await heap.live();
    const loaded = await load(dev, row.requests, heap);
    const peak =
      loaded.livePeak === undefined || loaded.livePeak.total < idle.total ? idle : loaded.livePeak;
    return { idle, peak, usedPeak: loaded.usedPeak, sent: loaded.sent };
  } finally {
    heap.close();
    dev.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
}

/** docs/memory.md's table: row name → ceiling (MB) from its last column. */
function ceilings(page) {
  const section = /(?:^|\n)#{1,2} Memory\n([\s\S]*?)(?:\n## |$)/.exec(page)?.[1] ?? "";
  const rows = new Map();
  for (const line of section.split("\n")) {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const ceiling = Number(cells.at(-1));
    if (cells.length > 2 && Number.isFinite(ceiling)) rows.set(cells[0].replace(/`/g, ""), ceiling);
  }
  return rows;
}

const mb = (bytes) => (bytes / MB).toFixed(1);
const limits =
  options.check === undefined ? undefined : ceilings(readFileSync(options.check, "utf8"));
const failures = [];
console.log(
  "| what is loaded | JS heap live, idle | JS heap live, peak | ArrayBuffers (ORT's WASM " +
    "memory included) | compiled WASM code | JS heap used before collection, peak " +
    `| live total idle / peak under ${CONNECTIONS} connections | ceiling (MB) |`,
);
console.log("|---|---|---|---|---|---|---|---|");
for (const row of ROWS.filter(
  (candidate) => options.only === undefined || candidate.name.includes(options.only),
)) {
  const { idle, peak, usedPeak, sent } = await measure(row);
  const total = peak.total / MB;
  const ceiling = limits?.get(row.name);
  console.log(
    `| ${row.name} | ${mb(idle.js)} | ${mb(peak.js)} | ${mb(peak.buffers)} | ` +
      `${mb(peak.wasmCode)} | ${mb(usedPeak)} | ${mb(idle.total)} / ${total.toFixed(1)} ` +
      `| ${ceiling ?? "—"} |  <!-- ${sent} requests -->`,
  );
  if (limits !== undefined) {
    if (ceiling === undefined) failures.push(`${row.name}: no line in docs/memory.md's table`);
    else if (total > ceiling)
      failures.push(`${row.name}: ${total.toFixed(1)} MB exceeds its ceiling of ${ceiling} MB`);
  }
}
if (failures.length > 0) {
  console.error(failures.join("\n"));
  process.exit(1);
}
