// Tokenizer benchmark (issue 9, outcomes 5 and 8), one run, side by side for each reference
// tokenizer:
// - inside workerd (Miniflare, a fresh isolate per tokenizer and implementation): load and
//   ready time (load + a first short encode), the sha256 check of the file, V8 heap
//   (inspector Runtime.getHeapUsage after a forced GC) before loading, after loading and
//   after encoding the whole 5.7k-string parity corpus, and encode/decode throughput on
//   held-out documents — for the compact form (ours) and @huggingface/tokenizers from JSON;
// - the Rust `tokenizers` binding, single-threaded (UV_THREADPOOL_SIZE=1 RAYON_NUM_THREADS=1),
//   on the same documents.
// Held-out documents: the spam classifier's test split (SpamAssassin, never used to build or
// tune the tokenizers here), subject + body, sizes printed.
//   node scripts/bench-tokenizers.mjs [--only llama3,gemma3] [--repeat 3] [--skip-hf]
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import WebSocketClient from "ws";
import { loadSplits } from "./spam/dataset.mjs";
import { buildCorpus } from "./tokenizers/corpus.mjs";
import { REFERENCE_TOKENIZERS, compactTokenizer, tokenizerFiles } from "./tokenizers/sources.mjs";

const { values: options } = parseArgs({
  options: {
    only: { type: "string" },
    repeat: { type: "string", default: "3" },
    "skip-hf": { type: "boolean", default: false },
  },
});
const REPEAT = Number(options.repeat);
const names = options.only
  ? options.only.split(",")
  : ["llama3", "qwen3", "gemma3", "deepseek-v3", "gpt-oss"];

const documents = loadSplits().test.map((row) => row.text);
const corpus = buildCorpus().map((entry) => entry.text);
const sizes = documents.map((d) => d.length).sort((a, b) => a - b);
const _docChars = sizes.reduce((a, b) => a + b, 0);
const docBytes = documents.reduce((n, d) => n + Buffer.byteLength(d), 0);
console.log(
  `held-out documents: ${documents.length} SpamAssassin test-split mails, ` +
    `${(docBytes / 1e6).toFixed(2)} MB UTF-8, median ${sizes[sizes.length >> 1]} ` +
    `chars, p90 ${sizes[Math.floor(sizes.length * 0.9)]}, max ${sizes.at(-1)}`,
);
console.log(
  `heap corpus: ${corpus.length} strings, ` +
    `${(corpus.reduce((n, t) => n + t.length, 0) / 1e6).toFixed(2)} ` +
    "M UTF-16 units (scripts/tokenizers/corpus.mjs)",
);

const bundled = await build({
  entryPoints: ["scripts/tokenizers/bench-worker.mjs"],
  bundle: true,
  format: "esm",
  write: false,
  platform: "neutral",
  external: ["./tokenizer.data"],
  logLevel: "error",
});
const workerCode = bundled.outputFiles[0].text;

/** One inspector session on the isolate: the V8 heap after a forced GC. */
async function inspector(mf) {
  const base = await mf.getInspectorURL();
  const targets = await (await fetch(`http://${base.host}/json`)).json();
  const target =
    targets.find((t) => t.title?.includes("bench") || t.id?.includes("bench")) ?? targets[0];
  const socket = new WebSocketClient(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let next = 1;
  const pending = new Map();
  socket.on("message", (raw) => {
    const message = JSON.parse(raw.toString());
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    /**
     * `pump` sends the isolate a request: workerd runs the GC command on the isolate's next turn.
     */
    async heapMB(pump) {
      let done = false;
      const collected = call("HeapProfiler.collectGarbage").then(() => (done = true));
      while (!done)
        await Promise.race([
          collected,
          pump().then(() => new Promise((resolve) => setTimeout(resolve, 50))),
        ]);
      const usage = await call("Runtime.getHeapUsage");
      return usage.usedSize / 2 ** 20;
    },
    close: () => socket.close(),
  };
}

const debug = process.env.BENCH_DEBUG
  ? (...args) => console.error(new Date().toISOString(), ...args)
  : () => {};

async function inWorkerd(kind, file) {
  debug("workerd", kind, file);
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      inspectorPort: 0,
      workers: [
        {
          name: "bench",
          compatibilityDate: "2026-11-01",
          modules: [
            { type: "ESModule", path: "worker.mjs", contents: workerCode },
            { type: "Data", path: "tokenizer.data", contents: readFileSync(file) },
          ],
        },
      ],
    }),
  );
  try {
    const session = await inspector(mf);
    debug("inspector open");
    const request = async (path, body) =>
      (
        await mf.dispatchFetch(
          `http://bench${path}`,
          body === undefined ? {} : { method: "POST", body: JSON.stringify(body) },
        )
      ).json();
    const pump = () => mf.dispatchFetch("http://bench/ping").then((r) => r.arrayBuffer());
    const heapBefore = await session.heapMB(pump);
    const load = await request(`/load?kind=${kind}`);
    debug("loaded", load);
    const heapLoaded = await session.heapMB(pump);
    await request("/encode", corpus);
    const heapCorpus = await session.heapMB(pump);
    let encodeMs = Infinity;
    let decodeMs = Infinity;
    let tokens = 0;
    for (let r = 0; r < REPEAT; r++) {
      const encoded = await request("/encode?keep=1", documents);
      encodeMs = Math.min(encodeMs, encoded.ms);
      tokens = encoded.tokens;
      decodeMs = Math.min(decodeMs, (await request("/decode")).ms);
    }
    session.close();
    return { ...load, heapBefore, heapLoaded, heapCorpus, encodeMs, decodeMs, tokens };
  } finally {
    await mf.dispose();
  }
}

function rustSingleThreaded(json) {
  const child = spawnSync(process.execPath, ["scripts/tokenizers/bench-rust.mjs"], {
    input: JSON.stringify({ json, documents, repeat: REPEAT }),
    env: { ...process.env, UV_THREADPOOL_SIZE: "1", RAYON_NUM_THREADS: "1" },
    maxBuffer: 1 << 26,
  });
  if (child.status !== 0) throw new Error(child.stderr.toString());
  return JSON.parse(child.stdout.toString());
}

const mbps = (ms) => (docBytes / 1e6 / (ms / 1000)).toFixed(2);
const rows = [];
for (const name of names) {
  const dir = REFERENCE_TOKENIZERS[name];
  const files = tokenizerFiles(dir);
  const compactBytes = compactTokenizer(dir);
  const compactPath = `node_modules/.cache/compact-tokenizers/bench-${name}.bin`;
  (await import("node:fs")).writeFileSync(compactPath, compactBytes);
  const ours = await inWorkerd("compact", compactPath);
  const hf = options["skip-hf"] ? undefined : await inWorkerd("json", files.json);
  const rust = rustSingleThreaded(files.json);
  if (hf !== undefined && hf.tokens !== ours.tokens)
    console.log(
      `!! ${name}: @huggingface/tokenizers gave ${hf.tokens} tokens, ours ${ours.tokens}`,
    );
  if (rust.tokens !== ours.tokens)
    console.log(`!! ${name}: Rust gave ${rust.tokens} tokens, ours ${ours.tokens}`);
  rows.push({ name, ours, hf, rust, jsonBytes: readFileSync(files.json).length });
  console.log(
    `\n${name}: ${ours.tokens} tokens in the held-out documents; ` +
      `tokenizer.json ${(rows.at(-1).jsonBytes / 1e6).toFixed(1)} ` +
      `MB, compact ${(ours.bytes / 1e6).toFixed(1)} MB`,
  );
  console.log(
    "  impl                     load ms  ready ms  sha256 ms  " +
      "heap empty/loaded/after corpus (MB)  encode MB/s  decode MB/s",
  );
  const line = (label, r, extra = "") =>
    console.log(
      `  ${label.padEnd(24)} ${r.loadMs.toFixed(1).padStart(7)}  ${(r.readyMs ?? r.loadMs).toFixed(1).padStart(8)}  ${(r.sha256Ms ?? NaN).toFixed(1).padStart(9)}  ${
        r.heapBefore === undefined
          ? "".padStart(35)
          : (
              `${r.heapBefore.toFixed(1)} / ` +
              `${r.heapLoaded.toFixed(1)} / ${r.heapCorpus.toFixed(1)}`
            ).padStart(35)
      }  ${mbps(r.encodeMs).padStart(11)}  ${mbps(r.decodeMs).padStart(11)}${extra}`,
    );
  line("compact (ours, workerd)", ours);
  if (hf !== undefined) line("@huggingface (workerd)", hf);
  line("Rust, 1 thread (Node)", rust, `  (RSS ${(rust.rss / 2 ** 20).toFixed(0)} MB)`);
  console.log(
    `  ratios ours vs Rust 1T: encode ×${(rust.encodeMs / ours.encodeMs).toFixed(2)}, ` +
      `decode ×${(rust.decodeMs / ours.decodeMs).toFixed(2)}` +
      (hf === undefined
        ? ""
        : `; ours vs @huggingface: load ×${(hf.readyMs / ours.readyMs).toFixed(0)}, heap ×` +
          `${((hf.heapLoaded - hf.heapBefore) / Math.max(0.1, ours.heapLoaded - ours.heapBefore)).toFixed(0)}` +
          `, encode ×${(hf.encodeMs / ours.encodeMs).toFixed(2)}, decode ×` +
          `${(hf.decodeMs / ours.decodeMs).toFixed(2)}`),
  );
}
console.log(
  `\nfigures: ${new Date().toISOString()}, node ` +
    `${process.version}, ${(await import("node:os")).cpus()[0].model}`,
);
