#!/usr/bin/env node
// Before and after a retraining, on the same held-out rows: the test split scripts/fraud/train.py
// wrote to DIR (its last rows by time), scored by the shipped INT8 model (the CSV featurized
// with the shipped vocabularies, as the edge does) and by DIR's retrained FP32 model.
//   node scripts/fraud/retrain-eval.mjs --csv labelled.csv --dir .cache/fraud/retrained
// (run by `npm run train:fraud -- --csv FILE`, after train.py)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { averagePrecision, precisionRecallAt } from "../lib/metrics.mjs";
import { mulberry32 } from "../lib/seeded-input.mjs";

const { values: options } = parseArgs({
  options: { csv: { type: "string" }, dir: { type: "string" } },
});
if (!options.csv || !options.dir) throw new Error("usage: --csv FILE --dir DIR");
const DIR = options.dir;
const SHIPPED = "models/fraud-gru";
const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";
const WINDOW = 7;

const read = (path, Type) => {
  const bytes = readFileSync(path);
  return new Type(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
};
const json = (path) => JSON.parse(readFileSync(path, "utf8"));

/** Scores of `count` windows; `rowsOf(i)` gives the i-th window's 7 row indices into X. */
async function score(model, X, F, count, rowsOf) {
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  const out = new Float32Array(count);
  for (let start = 0; start < count; start += 2048) {
    const size = Math.min(2048, count - start);
    const data = new Float32Array(WINDOW * size * F);
    for (let b = 0; b < size; b++) {
      const rows = rowsOf(start + b);
      for (let t = 0; t < WINDOW; t++)
        data.set(X.subarray(rows[t] * F, rows[t] * F + F), (t * size + b) * F);
    }
    const result = await session.run({
      transactions: new ort.Tensor("float32", data, [WINDOW, size, F]),
    });
    out.set(result.scores.data, start);
  }
  return out;
}

// After: the retrained model on train.py's own test windows.
const meta = json(`${DIR}/meta.json`);
const ids = read(`${DIR}/ids-test.i32`, Int32Array);
const labels = read(`${DIR}/labels-test.u8`, Uint8Array);
const windows = read(`${DIR}/windows-test.i32`, Int32Array);
const after = await score(
  `${DIR}/model.fp32.onnx`,
  read(`${DIR}/rows.f32`, Float32Array),
  meta.features,
  ids.length,
  (i) => windows.subarray(i * WINDOW, i * WINDOW + WINDOW),
);

// Before: the shipped model on the same rows, featurized with the shipped vocabularies.
execFileSync(
  PYTHON,
  ["scripts/fraud/fresh_features.py", "--csv", options.csv, "--out", `${DIR}/shipped`],
  { stdio: "inherit" },
);
const manifest = json(`${SHIPPED}/manifest.json`);
const shippedWindows = read(`${DIR}/shipped/windows.i32`, Int32Array);
const before = await score(
  `${SHIPPED}/${manifest.graphs.model.file}`,
  read(`${DIR}/shipped/rows.f32`, Float32Array),
  json(`${DIR}/shipped/meta.json`).features,
  ids.length,
  (i) => shippedWindows.subarray(ids[i] * WINDOW, ids[i] * WINDOW + WINDOW),
);

/** Recall when the `share` of payments with the highest scores is flagged (an alert budget). */
function recallAtShare(scores, share) {
  const flagged = Math.max(1, Math.round(share * scores.length));
  const threshold = [...scores].sort((a, b) => b - a)[flagged - 1];
  return precisionRecallAt(labels, scores, threshold).recall;
}

const { test } = meta.split;
const fraud = labels.reduce((sum, label) => sum + label, 0);
if (fraud === 0) throw new Error("no payment of the held-out rows is labelled fraud: more data");
const line = (name, scores) =>
  `${name.padEnd(34)} AUPRC ${averagePrecision(labels, scores).toFixed(4)}   recall at 1% / 5% ` +
  `flagged ${recallAtShare(scores, 0.01).toFixed(3)} / ${recallAtShare(scores, 0.05).toFixed(3)}`;
console.log(
  `\nheld-out: the last rows by time (${test.from} .. ${test.until}), ${ids.length} ` +
    `payments, ${fraud} labelled fraud; trained on ${meta.split.train.windows} ` +
    `(${meta.split.train.positives} fraud), best epoch by validation AUPRC ` +
    `(${meta.split.validation.windows} rows, ${meta.split.validation.positives} fraud)`,
);
console.log(line("before: shipped INT8 model", before));
console.log(line("after:  retrained FP32 model", after));
// Paired bootstrap of the AUPRC difference: how much of it the held-out rows' few frauds explain.
const random = mulberry32(7);
const differences = [];
for (let round = 0; round < 1000; round++) {
  const pick = Array.from(labels, () => Math.floor(random() * labels.length));
  const resampled = (scores) => pick.map((i) => scores[i]);
  const y = pick.map((i) => labels[i]);
  differences.push(averagePrecision(y, resampled(after)) - averagePrecision(y, resampled(before)));
}
differences.sort((a, b) => a - b);
const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;
console.log(
  `AUPRC after - before ${signed(averagePrecision(labels, after) - averagePrecision(labels, before))}` +
    ` (paired bootstrap, 1000 resamples: 95% of differences in ` +
    `${signed(differences[25])} .. ${signed(differences[974])})`,
);
const at = (threshold) => {
  const { precision, recall } = precisionRecallAt(labels, before, threshold);
  return `precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`;
};
console.log(
  `shipped thresholds: SUSPECT ${at(manifest.thresholds.suspect)}; ` +
    `FRAUD ${at(manifest.thresholds.fraud)}`,
);
console.log(`retrained model: ${DIR}/model.fp32.onnx (the shipped ${SHIPPED} is unchanged)`);
