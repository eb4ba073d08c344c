#!/usr/bin/env node
/**
 * Evaluate the fraud GRU (FP32 reference and INT8 deployable) with onnxruntime-node on the
 * held-out periods written by scripts/fraud/train.py, choose thresholds on VALIDATION, check
 * the INT8 model in onnxruntime-web (WASM, 1 thread), time both, and write
 * models/fraud-gru/manifest.json and test/fixtures/fraud-gru/windows.json.
 *
 *   node scripts/fraud/evaluate.mjs
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, statSync } from "node:fs";
import * as ortNode from "onnxruntime-node";
import { averagePrecision, precisionRecallAt, precisionRecallCurve } from "../lib/metrics.mjs";

const CACHE = ".cache/fraud";
const DIR = "models/fraud-gru";
const WINDOW = 7;
const FRAUD_PRECISION = 0.9;
const SUSPECT_RECALL = 0.95;

const meta = JSON.parse(readFileSync(`${CACHE}/meta.json`, "utf8"));
const features = JSON.parse(readFileSync(`${CACHE}/vocab.json`, "utf8"));
const F = meta.features;
const rowsBuf = readFileSync(`${CACHE}/rows.f32`);
const X = new Float32Array(rowsBuf.buffer, rowsBuf.byteOffset, rowsBuf.byteLength / 4);
if (X.length !== (meta.rows + 1) * F) throw new Error("rows.f32 does not match meta.json");

function loadSplit(name) {
  const w = readFileSync(`${CACHE}/windows-${name}.i32`);
  const windows = new Int32Array(w.buffer.slice(w.byteOffset, w.byteOffset + w.byteLength));
  const labels = new Uint8Array(readFileSync(`${CACHE}/labels-${name}.u8`));
  return { windows, labels, n: labels.length };
}

/** time-major [7, B, F] input for windows [start, end) */
function tensorFor(ort, split, start, end) {
  const B = end - start;
  const data = new Float32Array(WINDOW * B * F);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < WINDOW; t++) {
      const row = split.windows[(start + b) * WINDOW + t];
      data.set(X.subarray(row * F, row * F + F), (t * B + b) * F);
    }
  }
  return new ort.Tensor("float32", data, [WINDOW, B, F]);
}

async function scoreAll(session, ort, split, batch = 2048) {
  const scores = new Float32Array(split.n);
  for (let s = 0; s < split.n; s += batch) {
    const e = Math.min(split.n, s + batch);
    const out = await session.run({ transactions: tensorFor(ort, split, s, e) });
    scores.set(out.scores.data, s);
  }
  return scores;
}

/** precision/recall at a threshold, rounded for the manifest */
function at(labels, scores, threshold) {
  const { precision, recall, flagged } = precisionRecallAt(labels, scores, threshold);
  return { precision: round(precision), recall: round(recall), flagged };
}

const round = (x, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
const sha256 = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");

async function latency(session, ort, batch, iterations = 300) {
  const data = new Float32Array(WINDOW * batch * F);
  for (let i = 0; i < data.length; i += 37) data[i] = 1;
  const feeds = { transactions: new ort.Tensor("float32", data, [WINDOW, batch, F]) };
  for (let i = 0; i < 30; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < iterations; i++) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return {
    medianMs: round(times[times.length >> 1], 3),
    p90Ms: round(times[Math.floor(times.length * 0.9)], 3),
  };
}

const opts = {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
};
const fp32 = await ortNode.InferenceSession.create(`${DIR}/model.fp32.onnx`, opts);
const int8 = await ortNode.InferenceSession.create(`${DIR}/model.int8.onnx`, opts);
const val = loadSplit("validation");
const test = loadSplit("test");

const scores = {};
for (const [name, session] of [
  ["fp32", fp32],
  ["int8", int8],
]) {
  scores[name] = {
    validation: await scoreAll(session, ortNode, val),
    test: await scoreAll(session, ortNode, test),
  };
}
const auprc = {};
for (const name of ["fp32", "int8"]) {
  auprc[name] = {
    validation: averagePrecision(val.labels, scores[name].validation),
    test: averagePrecision(test.labels, scores[name].test),
  };
}
let maxDiff = 0;
for (let i = 0; i < test.n; i++)
  maxDiff = Math.max(maxDiff, Math.abs(scores.fp32.test[i] - scores.int8.test[i]));

// Thresholds on VALIDATION, for the deployed INT8 scores.
const points = precisionRecallCurve(val.labels, scores.int8.validation);
const fraudPoint = points
  .filter((p) => p.precision >= FRAUD_PRECISION)
  .reduce(
    (best, p) =>
      !best || p.recall > best.recall || (p.recall === best.recall && p.threshold > best.threshold)
        ? p
        : best,
    null,
  );
const suspectPoint = points.find((p) => p.recall >= SUSPECT_RECALL);
const fraudThreshold = fraudPoint ? fraudPoint.threshold : 1;
const suspectThreshold = Math.min(suspectPoint.threshold, fraudThreshold);
const thresholds = {
  suspect: suspectThreshold,
  fraud: fraudThreshold,
  rule:
    "score >= fraud -> FRAUD; else score >= suspect -> SUSPECT; else LEGIT. " +
    "Chosen on the validation period with the INT8 model: fraud = the " +
    `threshold with the highest recall at precision >= ${FRAUD_PRECISION}, ` +
    `suspect = the highest threshold with recall >= ${SUSPECT_RECALL}`,
  validation: {
    suspect: at(val.labels, scores.int8.validation, suspectThreshold),
    fraud: at(val.labels, scores.int8.validation, fraudThreshold),
  },
  test: {
    suspect: at(test.labels, scores.int8.test, suspectThreshold),
    fraud: at(test.labels, scores.int8.test, fraudThreshold),
  },
  testFp32: {
    suspect: at(test.labels, scores.fp32.test, suspectThreshold),
    fraud: at(test.labels, scores.fp32.test, fraudThreshold),
  },
};

// onnxruntime-web (WASM, single thread): the INT8 model must load and agree with native.
const ortWeb = await import("onnxruntime-web");
ortWeb.env.wasm.numThreads = 1;
const web = await ortWeb.InferenceSession.create(readFileSync(`${DIR}/model.int8.onnx`), {
  executionProviders: ["wasm"],
  graphOptimizationLevel: "all",
});
const webN = 512;
const webOut = await web.run({ transactions: tensorFor(ortWeb, test, 0, webN) });
let webDiff = 0;
for (let i = 0; i < webN; i++)
  webDiff = Math.max(webDiff, Math.abs(webOut.scores.data[i] - scores.int8.test[i]));
const webSingle = await web.run({ transactions: tensorFor(ortWeb, test, 0, 1) });
if (webSingle.scores.dims.length !== 1 || webSingle.scores.dims[0] !== 1)
  throw new Error("unexpected WASM output shape");

const timing = {};
for (const batch of [1, 16]) {
  timing[`batch${batch}`] = {
    fp32Native: await latency(fp32, ortNode, batch),
    int8Native: await latency(int8, ortNode, batch),
    int8Wasm: await latency(web, ortWeb, batch),
  };
}

// windows.json fixture: the histories chosen by fixtures.py scored by onnxruntime-node.
const fixtureWindows = JSON.parse(readFileSync(`${CACHE}/fixture-windows.json`, "utf8"));
const int8Sha = sha256(`${DIR}/model.int8.onnx`);
const fp32Sha = sha256(`${DIR}/model.fp32.onnx`);
const histories = [];
for (const h of fixtureWindows) {
  const data = Float32Array.from(h.window.flat()); // [7, F] -> [7, 1, F]
  const feeds = { transactions: new ortNode.Tensor("float32", data, [WINDOW, 1, F]) };
  const s8 = (await int8.run(feeds)).scores.data[0];
  const s32 = (await fp32.run(feeds)).scores.data[0];
  const sWeb = (await web.run({ transactions: new ortWeb.Tensor("float32", data, [WINDOW, 1, F]) }))
    .scores.data[0];
  histories.push({
    why: h.why,
    isFraud: h.isFraud,
    transactions: h.transactions,
    paddedSteps: WINDOW - h.transactions.length,
    window: h.window,
    int8Score: s8,
    fp32Score: s32,
    int8WasmScore: sWeb,
  });
}
writeFileSync(
  "test/fixtures/fraud-gru/windows.json",
  JSON.stringify({
    description:
      "Card histories (raw TabFormer transactions, oldest first; the last one is scored). " +
      "`window` is the model input [7][F] from scripts/fraud/features.py (left-padded with " +
      "all-zero rows when fewer than 7 transactions). int8Score/fp32Score: " +
      "onnxruntime-node 1.30, 1 thread; int8WasmScore: onnxruntime-web 1.30 WASM, 1 thread.",
    modelSha256: int8Sha,
    referenceSha256: fp32Sha,
    featureCount: F,
    histories,
  }),
);

const split = meta.split;
// written by generate.mjs
const world = JSON.parse(readFileSync(`${CACHE}/transactions.json`, "utf8"));
const evaluation = {
  dataset:
    `scripts/fraud/generate.mjs seed ${world.seed}: ${world.users.toLocaleString("en-US")} ` +
    `synthetic users, ${world.cards.toLocaleString("en-US")} cards, ${meta.rows} ` +
    `TabFormer-schema transactions in 2019, ${meta.fraudRows} fraud ` +
    `(${round((100 * meta.fraudRows) / meta.rows, 3)}%)`,
  split:
    "by time of the scored transaction (UTC): train " +
    `${split.train.from}..<${split.train.until}, validation ` +
    `${split.validation.from}..<${split.validation.until}, test ` +
    `${split.test.from}..<${split.test.until}; histories may reach back into earlier periods`,
  examples: test.n,
  positives: split.test.positives,
  validationExamples: val.n,
  validationPositives: split.validation.positives,
  fp32: { auprc: round(auprc.fp32.test), validationAuprc: round(auprc.fp32.validation) },
  int8: { auprc: round(auprc.int8.test), validationAuprc: round(auprc.int8.validation) },
  auprcDifference: round(auprc.int8.test - auprc.fp32.test, 5),
  maxAbsScoreDifference: round(maxDiff, 5),
  sizeRatio: round(
    statSync(`${DIR}/model.int8.onnx`).size / statSync(`${DIR}/model.fp32.onnx`).size,
  ),
  wasm: { maxAbsDifferenceVsNative: round(webDiff, 6), windowsChecked: webN },
  latency: {
    runtime:
      "onnxruntime-node 1.30 (native CPU) vs onnxruntime-web 1.30 " +
      "(WASM) in node 20, 1 thread, this build machine (shared, 2 cores)",
    ...timing,
  },
};
const { trainSeconds, validationAuprcTorch, ...training } = meta.training;
const signature = {
  inputs: [{ name: "transactions", datatype: "FP32", shape: [WINDOW, -1, F] }],
  outputs: [{ name: "scores", datatype: "FP32", shape: [-1] }],
};
const manifest = {
  name: "fraud-gru",
  version: "1.1.0",
  task: "fraud-scoring",
  description:
    "Card-fraud scorer over the last 7 transactions of a card (IBM TabFormer GRU " +
    `architecture, hidden ${meta.training.hidden}), INT8 weights and static INT8 ` +
    "activations (calibrated on validation); trained on synthetic TabFormer-schema data",
  runtime: "wasm",
  // Loaded and run once while the isolate starts (src/tasks/preload.ts).
  preload: true,
  // src/models/manifest.ts: "model" is the graph the task runs, "reference" its FP32 original.
  graphs: {
    model: {
      file: "model.int8.onnx",
      sha256: int8Sha,
      bytes: statSync(`${DIR}/model.int8.onnx`).size,
      ...signature,
    },
    reference: {
      file: "model.fp32.onnx",
      sha256: fp32Sha,
      bytes: statSync(`${DIR}/model.fp32.onnx`).size,
      ...signature,
    },
  },
  labels: ["LEGIT", "SUSPECT", "FRAUD"],
  window: WINDOW,
  windowing: {
    order:
      "per card (User, Card), transactions ordered by time; " +
      "step 0 = oldest, step 6 = the transaction being scored",
    layout: "time-major [7, batch, F]",
    padding:
      "fewer than 6 earlier transactions -> the missing OLDEST steps are all-zero " +
      "feature vectors (left padding); the scored transaction is always step 6",
    datetime: "Year/Month/Day/Time are wall-clock fields interpreted as UTC",
  },
  features,
  thresholds,
  evaluation,
  training: {
    ...training,
    trainWindows: training.trainWindowsPerEpoch,
    trainSeconds,
    trainSecondsNote: "PyTorch 1.13 CPU, 1 thread, shared 2-core machine",
  },
};
writeFileSync(`${DIR}/manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);

console.log(
  JSON.stringify(
    {
      F,
      auprc,
      auprcDifference: evaluation.auprcDifference,
      maxDiff,
      webDiff,
      thresholds,
      timing,
      histories: histories.map((h) => [h.why, h.int8Score, h.fp32Score]),
    },
    null,
    1,
  ),
);
const ok = auprc.int8.test >= 0.9 && Math.abs(auprc.int8.test - auprc.fp32.test) <= 0.005;
console.log(ok ? "targets met: AUPRC >= 0.90 and |INT8 - FP32| <= 0.005" : "TARGETS NOT MET");
