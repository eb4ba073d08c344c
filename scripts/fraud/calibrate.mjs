#!/usr/bin/env node
// Calibrates static INT8 activation ranges for the fraud model: runs the FP32 graph, with every
// MatMul/Gemm input that scripts/quantize.py quantizes exposed as an extra output, on VALIDATION
// windows (all fraud + 4,000 seeded non-fraud) and writes each one's min/max.
//   node scripts/fraud/calibrate.mjs   (after scripts/fraud/train.py; writes
//                                       .cache/fraud/calibration.json)
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import { mulberry32 } from "../lib/seeded-input.mjs";

const CACHE = ".cache/fraud";
const WINDOW = 7;
const NON_FRAUD = 4000;
const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";

execFileSync(
  PYTHON,
  [
    "scripts/quantize.py",
    "--probe",
    "models/fraud-gru/model.fp32.onnx",
    `${CACHE}/model.fp32.probe.onnx`,
  ],
  { stdio: "inherit" },
);

const meta = JSON.parse(readFileSync(`${CACHE}/meta.json`, "utf8"));
const F = meta.features;
const bytes = (file) => readFileSync(`${CACHE}/${file}`);
const rows = bytes("rows.f32");
const X = new Float32Array(rows.buffer, rows.byteOffset, rows.byteLength / 4);
const windowBytes = bytes("windows-validation.i32");
const windows = new Int32Array(
  windowBytes.buffer.slice(windowBytes.byteOffset, windowBytes.byteOffset + windowBytes.byteLength),
);
const labels = new Uint8Array(bytes("labels-validation.u8"));

const random = mulberry32(12345);
const fraud = [];
const legit = [];
labels.forEach((label, i) => (label ? fraud : legit).push(i));
for (let i = legit.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [legit[i], legit[j]] = [legit[j], legit[i]];
}
const chosen = [...fraud, ...legit.slice(0, NON_FRAUD)].sort((a, b) => a - b);

const session = await ort.InferenceSession.create(`${CACHE}/model.fp32.probe.onnx`, {
  intraOpNumThreads: 1,
});
const probes = session.outputNames.filter((name) => name !== "scores");
const ranges = Object.fromEntries(probes.map((name) => [name, { min: Infinity, max: -Infinity }]));
for (let start = 0; start < chosen.length; start += 1024) {
  const batch = chosen.slice(start, start + 1024);
  const data = new Float32Array(WINDOW * batch.length * F);
  batch.forEach((window, b) => {
    for (let t = 0; t < WINDOW; t++) {
      const row = windows[window * WINDOW + t];
      data.set(X.subarray(row * F, row * F + F), (t * batch.length + b) * F);
    }
  });
  const out = await session.run({
    transactions: new ort.Tensor("float32", data, [WINDOW, batch.length, F]),
  });
  for (const name of probes) {
    for (const value of out[name].data) {
      if (value < ranges[name].min) ranges[name].min = value;
      if (value > ranges[name].max) ranges[name].max = value;
    }
  }
}
writeFileSync(
  `${CACHE}/calibration.json`,
  `${JSON.stringify({ windows: chosen.length, fraud: fraud.length, ranges }, null, 1)}\n`,
);
console.log(
  `calibrated ${probes.length} activations on ${chosen.length} validation ` +
    `windows (${fraud.length} fraud) -> ${CACHE}/calibration.json`,
);
