#!/usr/bin/env node
// Calibrates static INT8 activation ranges for the digit classifier: runs the FP32 graph, with
// every Conv/Gemm input that scripts/quantize.py quantizes exposed as an extra output, on
// CALIBRATION_SAMPLES TRAINING digits (every k-th; the held-out 2,000 are never read) and
// writes each activation's min/max.
//   node scripts/digits/calibrate.mjs   (after train.py; writes .cache/digits/calibration.json)
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { CACHE_DIR, CALIBRATION_SAMPLES, MODEL_DIR } from "./config.mjs";

const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";
const probePath = join(CACHE_DIR, "model.fp32.probe.onnx");
execFileSync(
  PYTHON,
  ["scripts/quantize.py", "--probe", join(MODEL_DIR, "model.fp32.onnx"), probePath],
  { stdio: "inherit" },
);

const raw = readFileSync(join(CACHE_DIR, "train.f32"));
const train = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
const count = train.length / 784;
const step = Math.max(1, Math.floor(count / CALIBRATION_SAMPLES));
const chosen = Array.from({ length: Math.min(CALIBRATION_SAMPLES, count) }, (_, i) => i * step);

const session = await ort.InferenceSession.create(probePath, { intraOpNumThreads: 1 });
const probes = session.outputNames.filter((name) => name !== "logits");
const ranges = Object.fromEntries(probes.map((name) => [name, { min: Infinity, max: -Infinity }]));
for (let start = 0; start < chosen.length; start += 256) {
  const batch = chosen.slice(start, start + 256);
  const data = new Float32Array(batch.length * 784);
  batch.forEach((index, b) => data.set(train.subarray(index * 784, (index + 1) * 784), b * 784));
  const out = await session.run({
    pixels: new ort.Tensor("float32", data, [batch.length, 1, 28, 28]),
  });
  for (const name of probes) {
    for (const value of out[name].data) {
      if (value < ranges[name].min) ranges[name].min = value;
      if (value > ranges[name].max) ranges[name].max = value;
    }
  }
}
writeFileSync(
  join(CACHE_DIR, "calibration.json"),
  `${JSON.stringify({ samples: chosen.length, ranges }, null, 1)}\n`,
);
console.log(
  `calibrated ${probes.length} activations on ${chosen.length} ` +
    `training digits -> ${CACHE_DIR}/calibration.json`,
);
