#!/usr/bin/env node
// IBM's published fraud GRU/LSTM (../shared/external/ibm-ccf, third-party, read-only; never
// copied into the repo) -> unrolled FP32 (scripts/unroll-rnn.py) -> INT8 (scripts/quantize.py),
// written to .cache/ibm/, then checked and timed:
//   (a) original FP32 vs unrolled FP32 on every output (the rewrite must be exact, ~1e-5)
//   (b) unrolled FP32 vs INT8 on the last-step score y[-1, :, 0]: largest and mean |diff|
//       (and INT8 native vs INT8 WASM, which should agree), for two INT8 versions:
//       dynamic activations (scripts/quantize.py) and static activations calibrated on
//       CALIBRATION other seeded inputs (scripts/quantize.py --probe, then --calibration)
//   (c) file sizes
//   (d) latency p50 at batch 16, one thread: FP32 / INT8, onnxruntime-node / onnxruntime-web WASM,
//       engines interleaved after a warm-up (scripts/lib/stats.mjs timeInterleaved)
// Usage: node scripts/ibm-quantize.mjs [--inputs 300] [--runs 300]
//        (PYTHON=/usr/bin/python3 by default: needs the onnx package)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { tabFormerLikeInput } from "./lib/seeded-input.mjs";
import { timeInterleaved } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: { inputs: { type: "string", default: "300" }, runs: { type: "string", default: "300" } },
});
const INPUTS = Number(options.inputs);
const CALIBRATION = 64; // seeds 1..64; accuracy inputs use seeds 1000.. (never calibrated on)
const RUNS = Number(options.runs);
const PY = process.env.PYTHON ?? "/usr/bin/python3";
const DIR = "../shared/external/ibm-ccf";
const OUT = ".cache/ibm";
const T = 7,
  BATCH = 16,
  WIDTH = 220;
const MODELS = [
  { name: "GRU", file: "ccf_gru_static_tf2onnx_OS_new.onnx", key: "gru" },
  { name: "LSTM", file: "ccf_lstm_static_tf2onnx_OS_new.onnx", key: "lstm" },
];

const input = (seed) => tabFormerLikeInput(T, BATCH, WIDTH, seed);

const native = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
};
ortWeb.env.wasm.numThreads = 1;
const web = { executionProviders: ["wasm"], graphOptimizationLevel: "all" };

async function open(ort, path) {
  const session = await ort.InferenceSession.create(
    ort === ortWeb ? readFileSync(path) : path,
    ort === ortWeb ? web : native,
  );
  return {
    async run(data) {
      const result = await session.run({
        [session.inputNames[0]]: new ort.Tensor("float32", data, [T, BATCH, WIDTH]),
      });
      return result[session.outputNames[0]].data; // [7, 16, 1]
    },
  };
}

// Static activations: expose every activation quantize.py would quantize, record its range
// over CALIBRATION seeded inputs with onnxruntime-node, then quantize with those ranges.
async function calibrateAndQuantize(fp32, out, prefix) {
  const probePath = `${prefix}.probe.onnx`;
  execFileSync(PY, ["scripts/quantize.py", "--probe", fp32, probePath], { stdio: "inherit" });
  const session = await ortNode.InferenceSession.create(probePath, native);
  const probes = session.outputNames.slice(1);
  const ranges = Object.fromEntries(
    probes.map((name) => [name, { min: Infinity, max: -Infinity }]),
  );
  for (let seed = 1; seed <= CALIBRATION; seed++) {
    const result = await session.run({
      [session.inputNames[0]]: new ortNode.Tensor("float32", input(seed), [T, BATCH, WIDTH]),
    });
    for (const name of probes) {
      for (const value of result[name].data) {
        ranges[name].min = Math.min(ranges[name].min, value);
        ranges[name].max = Math.max(ranges[name].max, value);
      }
    }
  }
  writeFileSync(
    `${prefix}.calibration.json`,
    JSON.stringify({ inputs: CALIBRATION * BATCH, ranges }),
  );
  execFileSync(
    PY,
    ["scripts/quantize.py", fp32, out, "--calibration", `${prefix}.calibration.json`],
    { stdio: "inherit" },
  );
}

const lastStep = (y) => y.subarray((T - 1) * BATCH, T * BATCH);
const kb = (path) => `${(statSync(path).size / 1024).toFixed(0)} KiB`;
const fmt = (x) => (x === 0 ? "0" : x < 1e-3 ? x.toExponential(1) : x.toFixed(4));

mkdirSync(OUT, { recursive: true });
const rows = [];
for (const model of MODELS) {
  const original = `${DIR}/${model.file}`;
  if (!existsSync(original)) {
    console.log(`skipping ${model.name}: ${original} not found`);
    continue;
  }
  const unrolled = `${OUT}/${model.key}.unrolled.fp32.onnx`;
  const int8 = `${OUT}/${model.key}.unrolled.int8.onnx`;
  execFileSync(PY, ["scripts/unroll-rnn.py", original, unrolled], { stdio: "inherit" });
  execFileSync(PY, ["scripts/quantize.py", unrolled, int8], { stdio: "inherit" });
  const int8Static = `${OUT}/${model.key}.unrolled.int8-static.onnx`;
  await calibrateAndQuantize(unrolled, int8Static, `${OUT}/${model.key}`);

  const sessions = {
    original: await open(ortNode, original),
    unrolled: await open(ortNode, unrolled),
    int8: await open(ortNode, int8),
    int8Static: await open(ortNode, int8Static),
    originalWeb: await open(ortWeb, original),
    int8Web: await open(ortWeb, int8),
  };
  let exact = 0,
    sumExact = 0,
    maxQ = 0,
    sumQ = 0,
    countQ = 0,
    webGap = 0,
    maxS = 0,
    sumS = 0;
  for (let k = 0; k < INPUTS; k++) {
    const data = input(1000 + k);
    const [a, b, q] = [
      await sessions.original.run(data),
      await sessions.unrolled.run(data),
      await sessions.int8.run(data),
    ];
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(a[i] - b[i]);
      exact = Math.max(exact, d);
      sumExact += d / a.length;
    }
    const [lb, lq, ls] = [lastStep(b), lastStep(q), lastStep(await sessions.int8Static.run(data))];
    for (let i = 0; i < lb.length; i++) {
      const d = Math.abs(lb[i] - lq[i]);
      maxQ = Math.max(maxQ, d);
      sumQ += d;
      countQ++;
      const ds = Math.abs(lb[i] - ls[i]);
      maxS = Math.max(maxS, ds);
      sumS += ds;
    }
    if (k < 20) {
      const w = await sessions.int8Web.run(data);
      for (let i = 0; i < q.length; i++) webGap = Math.max(webGap, Math.abs(q[i] - w[i]));
    }
  }
  // FP32 rounding + ORT's approximate Sigmoid/Tanh differ slightly between the fused GRU/LSTM
  // kernels and the unrolled ops; a mistake in the rewrite would show up as >= 1e-2.
  if (exact > 1e-3)
    throw new Error(`${model.name}: unrolled FP32 differs from the original by ${exact}`);
  const data = input(7);
  rows.push({
    model: model.name,
    exact,
    meanExact: sumExact / INPUTS,
    maxQ,
    meanQ: sumQ / countQ,
    maxS,
    meanS: sumS / countQ,
    webGap,
    sizes: [kb(original), kb(unrolled), kb(int8)],
    p50: (
      await timeInterleaved(
        [sessions.original, sessions.int8, sessions.originalWeb, sessions.int8Web].map(
          (session) => () => session.run(data),
        ),
        { inputs: RUNS, block: 25, warmupMs: 2000 },
      )
    ).map((summary) => summary.p50),
  });
}

if (rows.length) {
  console.log(
    "\nIBM CCF models, input [7, 16, 220] (seeded, ~5% ones, last 2 columns uniform); " +
      `${INPUTS} inputs for accuracy, p50 of ${RUNS} runs, batch 16, one thread`,
  );
  console.log(
    "| model | orig vs unrolled FP32, all steps: max / mean abs | INT8 " +
      "(dynamic) vs FP32 last-step score: max / mean abs | INT8 (static) vs " +
      "FP32: max / mean abs | INT8 native vs WASM max abs | size orig / unrolled " +
      "FP32 / INT8 | p50 ms FP32 native | INT8 native | FP32 WASM | INT8 WASM |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.model} | ${fmt(r.exact)} / ${fmt(r.meanExact)} | ${fmt(r.maxQ)} / ` +
        `${fmt(r.meanQ)} | ${fmt(r.maxS)} / ${fmt(r.meanS)} | ${fmt(r.webGap)} | ` +
        `${r.sizes.join(" / ")} | ${r.p50.map((x) => x.toFixed(2)).join(" | ")} |`,
    );
  }
}
