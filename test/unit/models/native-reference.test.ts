// Keeps the workerd parity fixture honest: onnxruntime-node, run now on the shipped INT8
// model, reproduces the logits that test/workers/classify/parity.test.ts compares workerd against.
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TextClassificationSchema } from "../../../src/models/manifest";
import { sha256Hex } from "../../../src/models/store";

const dir = "models/spam-classifier";
const manifest = TextClassificationSchema.parse(
  JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")),
);
const reference = z
  .object({
    modelSha256: z.string(),
    cases: z.array(
      z.object({ ids: z.array(z.number().int()), logits: z.array(z.array(z.number())) }),
    ),
  })
  .parse(JSON.parse(readFileSync("test/fixtures/spam-classifier/reference.json", "utf8")));

describe("onnxruntime-node reference", () => {
  it("shipped files match their manifest sha256 and size", async () => {
    const model = readFileSync(`${dir}/${manifest.graphs.model!.file}`);
    expect(await sha256Hex(model)).toBe(manifest.graphs.model!.sha256);
    expect(model.length).toBe(manifest.graphs.model!.bytes);
    expect(await sha256Hex(readFileSync(`${dir}/${manifest.tokenizer.file}`))).toBe(
      manifest.tokenizer.sha256,
    );
    // The fixture was made with the training script's graph: the optimized one's source.
    expect(reference.modelSha256).toBe(
      manifest.graphs.model!.optimized?.source.sha256 ?? manifest.graphs.model!.sha256,
    );
  });

  it("reproduces the saved logits", async () => {
    const session = await ort.InferenceSession.create(`${dir}/${manifest.graphs.model!.file}`, {
      intraOpNumThreads: 1,
    });
    for (const { ids, logits } of reference.cases) {
      const shape = [1, ids.length];
      const output = await session.run({
        input_ids: new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), shape),
        attention_mask: new ort.Tensor("int64", new BigInt64Array(ids.length).fill(1n), shape),
      });
      const actual = Array.from(output.logits!.data as Float32Array);
      actual.forEach((value, i) =>
        expect(Math.abs(value - logits.flat()[i]!)).toBeLessThanOrEqual(1e-5),
      );
    }
  });

  it("INT8 graph meets its size target against the FP32 reference", () => {
    expect(manifest.graphs.reference).toBeDefined();
    expect(manifest.graphs.model!.bytes / manifest.graphs.reference!.bytes).toBeLessThanOrEqual(
      0.3,
    );
  });
});
