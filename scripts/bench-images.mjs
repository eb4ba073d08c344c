#!/usr/bin/env node
// Text-to-image, side by side in one run (digit-diffusion, the defaults' scheduler and guidance):
//   - per image: the origin's compute (POST /v2/models/digit-diffusion/generate straight to
//     the reference origin) vs the whole request through the edge (wrangler dev), and the
//     edge's own work timed in Node on the Worker's code (noise, one preview, the final PNG);
//   - time to first preview and to the completed image (stream: true, partial_images: 3);
//   - images/s through the edge at 1 and 8 concurrent requests, with the origin's mean UNet
//     batch (rows per run, from its /metrics: 2 rows per image) showing steps batched;
//   - the in-isolate loop's time per image (onnxruntime-web WASM, one thread) beside the
//     same loop on onnxruntime-node (scripts/lib/diffusion-work.ts).
//   node scripts/bench-images.mjs [--runs 8] [--steps 20] [--requests 16]
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startOrigin } from "./lib/origin.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";
import { percentile } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    runs: { type: "string", default: "8" },
    steps: { type: "string", default: "20" },
    requests: { type: "string", default: "16" },
  },
});
const RUNS = Number(options.runs);
const STEPS = Number(options.steps);
const REQUESTS = Number(options.requests);
const MODEL = "models/digit-diffusion";
const manifest = JSON.parse(readFileSync(`${MODEL}/manifest.json`, "utf8"));
const { promptLength, padTokenId } = manifest.diffusion;
const median = (values) => percentile(values, 50);
const fmt = (ms) => (ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));

const dir = mkdtempSync(join(tmpdir(), "bench-images-"));
cpSync(MODEL, join(dir, "digit-diffusion"), { recursive: true });
const origin = await startOrigin({ ORIGIN_MODELS: dir });
const edge = await startWranglerDev({
  persistTo: ".wrangler/bench-images",
  vars: { ORIGIN_URL: origin.url },
});

async function metric(name) {
  const text = await (await fetch(`${origin.url}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

async function timed(url, body) {
  const started = performance.now();
  const response = await fetch(url, {
    method: "POST",
    // The edge's API key (scripts/lib/wrangler-dev.mjs); the origin needs none.
    headers: {
      "content-type": "application/json",
      ...(url.startsWith(edge.url) ? edge.headers : {}),
    },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
  return performance.now() - started;
}

/** Time to the first partial image and to the completed one (ms). */
async function streamed(body) {
  const started = performance.now();
  const response = await fetch(`${edge.url}/v1/images/generations`, {
    method: "POST",
    headers: { "content-type": "application/json", ...edge.headers },
    body: JSON.stringify(body),
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let first;
  let completed;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const now = performance.now() - started;
    if (first === undefined && buffer.includes("image_generation.partial_image")) first = now;
    if (completed === undefined && buffer.includes("image_generation.completed")) completed = now;
  }
  return { first, completed };
}

try {
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  console.log(
    `digit-diffusion ${manifest.version}: ${STEPS} steps, ` +
      `${manifest.diffusion.defaults.scheduler}, guidance ` +
      `${manifest.diffusion.defaults.guidanceScale}; median ` +
      `of ${RUNS} runs; load average ${load}`,
  );
  const prompt = "a handwritten seven";
  const viaEdge = (seed) => ({ prompt, steps: STEPS, seed });
  // What the edge sends for that request (ids from the shipped tokenizer are the edge's job; any
  // ids of the same length cost the origin the same).
  const ids = [65, 280, 287, 304, 262, ...new Array(promptLength - 5).fill(padTokenId)];
  const direct = (seed) => ({
    inputs: [{ name: "input_ids", datatype: "INT64", shape: [1, promptLength], data: ids }],
    parameters: { steps: STEPS, seed, preview_every: 0 },
  });
  const originUrl = `${origin.url}/v2/models/digit-diffusion/generate`;
  await timed(originUrl, direct(0));
  await timed(`${edge.url}/v1/images/generations`, viaEdge(0));
  const [o, e] = [[], []];
  for (let i = 1; i <= RUNS; i += 1) {
    o.push(await timed(originUrl, direct(i)));
    e.push(await timed(`${edge.url}/v1/images/generations`, viaEdge(i)));
  }
  const first = [];
  const done = [];
  for (let i = 1; i <= RUNS; i += 1) {
    const t = await streamed({ ...viaEdge(i), stream: true, partial_images: 3 });
    first.push(t.first);
    done.push(t.completed);
  }
  const rates = [];
  for (const concurrency of [1, 8]) {
    const [runs, rows] = [
      await metric("origin_diffusion_unet_runs_total"),
      await metric("origin_diffusion_unet_rows_total"),
    ];
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < REQUESTS) {
          next += 1;
          await timed(`${edge.url}/v1/images/generations`, viaEdge(1000 + next));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const [runsAfter, rowsAfter] = [
      await metric("origin_diffusion_unet_runs_total"),
      await metric("origin_diffusion_unet_rows_total"),
    ];
    rates.push({
      concurrency,
      imagesPerSecond: REQUESTS / seconds,
      meanBatchImages: (rowsAfter - rows) / (runsAfter - runs) / 2,
    });
  }
  const work = JSON.parse(
    execFileSync("node_modules/.bin/tsx", [
      "scripts/lib/diffusion-work.ts",
      MODEL,
      String(STEPS),
      "3",
    ])
      .toString()
      .trim(),
  );

  console.log("\nper image (ms, median)                      value");
  console.log(`origin: the loop straight (generate)        ${fmt(median(o))}`);
  console.log(
    `edge → origin → edge (b64_json PNG)         ${fmt(median(e))}   ` +
      `(${median(e) >= median(o) ? "+" : "−"}${fmt(Math.abs(median(e) - median(o)))} ` +
      "vs the origin alone: within the noise of a busy machine)",
  );
  console.log(`edge work: seeded noise                      ${fmt(work.edge.noiseMs)}`);
  console.log(
    "edge work: one preview 28×28 / 224×224       " +
      `${fmt(work.edge.previewMs28)} / ${fmt(work.edge.previewMs224)}`,
  );
  console.log(
    "edge work: final PNG 28×28 / 224×224         " +
      `${fmt(work.edge.pngMs28)} / ${fmt(work.edge.pngMs224)}`,
  );
  console.log(
    "edge work / origin compute (28×28, 3 previews) " +
      `${(((work.edge.noiseMs + 3 * work.edge.previewMs28 + work.edge.pngMs28) / median(o)) * 100).toFixed(3)}` +
      " %",
  );
  console.log(
    "\nstreamed, partial_images 3: first preview " +
      `${fmt(median(first))} ms, completed ${fmt(median(done))} ms`,
  );
  for (const rate of rates)
    console.log(
      `${rate.concurrency} concurrent: ${rate.imagesPerSecond.toFixed(2)} images/s ` +
        `through the edge, mean UNet batch ${rate.meanBatchImages.toFixed(2)} images`,
    );
  console.log(
    "  ratio 8 vs 1 concurrent: " +
      `${(rates[1].imagesPerSecond / rates[0].imagesPerSecond).toFixed(2)}×`,
  );
  console.log(
    `\nloop per image, one thread (${STEPS} steps), warm (median of 3 after ` +
      `${work.wasm.warmupLoops} / ${work.native.warmupLoops} loops): in-isolate WASM ` +
      `${fmt(work.wasm.loopMs)} ms (CPU ${fmt(work.wasm.loopCpuMs)}, main thread ` +
      `${fmt(work.wasm.loopMainThreadCpuMs)}), onnxruntime-node ` +
      `${fmt(work.native.loopMs)} ms (CPU ${fmt(work.native.loopCpuMs)}, main thread ` +
      `${fmt(work.native.loopMainThreadCpuMs)}): WASM/native, main-thread CPU ` +
      `${(work.wasm.loopMainThreadCpuMs / work.native.loopMainThreadCpuMs).toFixed(2)}×`,
  );
  console.log(
    "  the first loop (a fresh isolate, WASM still tiering up): in-isolate WASM " +
      `${fmt(work.wasm.coldMs)} ms, onnxruntime-node ${fmt(work.native.coldMs)} ms`,
  );
  console.log(
    "in-isolate pipeline memory (Node, onnxruntime-web): WASM " +
      `linear memory ${work.memory.wasmLinearMB.toFixed(1)} MB, ` +
      `V8 heap +${work.memory.heapDeltaMB.toFixed(1)} MB`,
  );
} finally {
  edge.stop();
  await origin.stop();
  rmSync(dir, { recursive: true, force: true });
}
