// Re-measures the shipped model on the held-out split, so the manifest's figures (and those in
// docs/models.md) are checked on every CI run rather than trusted from the training run.
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { TextClassificationSchema } from "../../../src/models/manifest";
import { encodeBatch } from "../../../src/tokenizers/batch";
import { loadTextTokenizer } from "../../../src/tokenizers/load";
import { loadSplits } from "../../../scripts/spam/dataset.mjs";

const dir = "models/spam-classifier";
const manifest = TextClassificationSchema.parse(
  JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")),
);
const tokenizer = loadTextTokenizer(
  manifest.tokenizer.file,
  readFileSync(`${dir}/${manifest.tokenizer.file}`),
);
const splits: { test: { label: number; text: string }[] } = loadSplits();

/** Batches of 32 in split order, padded to the longest, as scripts/spam/evaluate.mjs runs them. */
const BATCH = 32;

async function predict(file: string): Promise<number[]> {
  const session = await ort.InferenceSession.create(`${dir}/${file}`, { intraOpNumThreads: 1 });
  const labels: number[] = [];
  for (let start = 0; start < splits.test.length; start += BATCH) {
    const texts = splits.test.slice(start, start + BATCH).map((row) => row.text);
    const batch = encodeBatch(tokenizer, texts, manifest.tokenizer);
    const { logits } = await session.run({
      input_ids: new ort.Tensor("int64", batch.inputIds, batch.shape),
      attention_mask: new ort.Tensor("int64", batch.attentionMask, batch.shape),
    });
    const data = logits!.data as Float32Array;
    texts.forEach((_, row) => labels.push(data[row * 2 + 1]! > data[row * 2]! ? 1 : 0));
  }
  return labels;
}

function f1(predicted: number[]): number {
  let tp = 0,
    fp = 0,
    fn = 0;
  predicted.forEach((label, i) => {
    const truth = splits.test[i]!.label;
    if (label === 1 && truth === 1) tp++;
    else if (label === 1) fp++;
    else if (truth === 1) fn++;
  });
  return (2 * tp) / (2 * tp + fp + fn);
}

describe("spam-classifier on the held-out test split", () => {
  it(
    "measures what its manifest says and meets the " +
      "targets: F1 ≥ 0.97, agreement ≥ 99.5%, size ≤ 30%",
    async () => {
      const [int8, fp32] = await Promise.all([
        predict(manifest.graphs.model!.file),
        predict(manifest.graphs.reference!.file),
      ]);
      expect(splits.test.length).toBe(manifest.evaluation.examples);
      const int8F1 = f1(int8);
      const agreement = int8.filter((label, i) => label === fp32[i]).length / int8.length;
      expect(int8F1).toBeCloseTo(manifest.evaluation.int8.f1, 3);
      expect(f1(fp32)).toBeCloseTo(manifest.evaluation.fp32.f1, 3);
      expect(agreement).toBeCloseTo(manifest.evaluation.agreement, 3);
      // The targets: INT8 F1 ≥ 0.97, agreement ≥ 99.5%, INT8 file ≤ 30% of FP32.
      expect(int8F1).toBeGreaterThanOrEqual(0.97);
      expect(agreement).toBeGreaterThanOrEqual(0.995);
      const bytes = (file: string) => readFileSync(`${dir}/${file}`).byteLength;
      expect(
        bytes(manifest.graphs.model!.file) / bytes(manifest.graphs.reference!.file),
      ).toBeLessThanOrEqual(0.3);
    },
  );
});
