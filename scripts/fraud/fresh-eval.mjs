#!/usr/bin/env node
// Evaluates the shipped fraud model on a world it never saw: a new generator seed (new
// cards, new merchants), featurized with the shipped vocabularies. Nothing in training,
// tuning or threshold choice looked at this data.
//   npm run eval:fraud:fresh [-- --seed 4242 --users 1500]
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { averagePrecision, precisionRecallAt } from "../lib/metrics.mjs";

const { values: options } = parseArgs({
  options: {
    seed: { type: "string", default: "4242" },
    users: { type: "string", default: "1500" },
  },
});
const SEED = options.seed;
const USERS = options.users;
const OUT = ".cache/fraud-fresh";
const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";
const WINDOW = 7;

execFileSync(
  "node",
  [
    "scripts/fraud/generate.mjs",
    "--seed",
    SEED,
    "--users",
    USERS,
    "--out",
    `${OUT}/transactions.csv`,
  ],
  { stdio: "inherit" },
);
execFileSync(
  PYTHON,
  ["scripts/fraud/fresh_features.py", "--csv", `${OUT}/transactions.csv`, "--out", OUT],
  { stdio: "inherit" },
);

const manifest = JSON.parse(readFileSync("models/fraud-gru/manifest.json", "utf8"));
const meta = JSON.parse(readFileSync(`${OUT}/meta.json`, "utf8"));
const F = meta.features;
const read = (file, Type) => {
  const bytes = readFileSync(`${OUT}/${file}`);
  return new Type(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
};
const X = read("rows.f32", Float32Array);
const windows = read("windows.i32", Int32Array);
const labels = read("labels.u8", Uint8Array);

async function scores(file) {
  const session = await ort.InferenceSession.create(`models/fraud-gru/${file}`, {
    intraOpNumThreads: 1,
  });
  const out = new Float32Array(labels.length);
  const batch = 2048;
  for (let start = 0; start < labels.length; start += batch) {
    const size = Math.min(batch, labels.length - start);
    const data = new Float32Array(WINDOW * size * F);
    for (let b = 0; b < size; b++) {
      for (let t = 0; t < WINDOW; t++) {
        const row = windows[(start + b) * WINDOW + t];
        data.set(X.subarray(row * F, row * F + F), (t * size + b) * F);
      }
    }
    const result = await session.run({
      transactions: new ort.Tensor("float32", data, [WINDOW, size, F]),
    });
    out.set(result.scores.data, start);
  }
  return out;
}

function at(score, threshold) {
  const { precision, recall } = precisionRecallAt(labels, score, threshold);
  return `precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`;
}

const fp32 = await scores(manifest.graphs.reference.file);
const int8 = await scores(manifest.graphs.model.file);
console.log(
  `\nfresh world: seed ${SEED}, ${USERS} users, ${labels.length} ` +
    `transactions, ${meta.positives} fraud (every transaction of 2019 scored)`,
);
console.log(
  `AUPRC FP32 ${averagePrecision(labels, fp32).toFixed(4)}, ` +
    `INT8 ${averagePrecision(labels, int8).toFixed(4)}`,
);
console.log(
  `FRAUD   (score ≥ ${manifest.thresholds.fraud.toFixed(4)}): ` +
    `${at(int8, manifest.thresholds.fraud)}`,
);
console.log(
  `SUSPECT (score ≥ ${manifest.thresholds.suspect.toFixed(4)}): ` +
    `${at(int8, manifest.thresholds.suspect)}`,
);
