// The INT8 model in workerd (onnxruntime-web WASM) must give onnxruntime-node's logits:
// the reference was saved by scripts/spam/evaluate.mjs for held-out texts run one by one.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import reference from "../../fixtures/spam-classifier/reference.json";
import { bundledModels } from "../../../src/models/bundled";
import { TextClassificationSchema } from "../../../src/models/manifest";
import { post } from "../../support/workers/helpers";

const ReferenceSchema = z.object({
  modelSha256: z.string(),
  cases: z.array(
    z.object({
      text: z.string(),
      ids: z.array(z.number().int()),
      logits: z.array(z.array(z.number())),
    }),
  ),
});

const { modelSha256, cases } = ReferenceSchema.parse(reference);
const manifest = TextClassificationSchema.parse(bundledModels[0]?.manifest);
const TOLERANCE = 1e-4;

describe("INT8 logits in workerd vs onnxruntime-node", () => {
  it(
    "the fixture was made with the shipped model (or " +
      "the source of its build-time optimized form)",
    () => {
      const graph = manifest.graphs.model!;
      expect(modelSha256).toBe(graph.optimized?.source.sha256 ?? graph.sha256);
      expect(cases.length).toBeGreaterThanOrEqual(8);
    },
  );

  it.each(cases.map((testCase, index) => [index, testCase] as const))(
    "case %i: OIP infer logits within 1e-4",
    async (_, testCase) => {
      const shape = [1, testCase.ids.length];
      const response = await post(`/v2/models/${manifest.name}/infer`, {
        inputs: [
          { name: "input_ids", shape, datatype: "INT64", data: testCase.ids },
          { name: "attention_mask", shape, datatype: "INT64", data: testCase.ids.map(() => 1) },
        ],
      });
      expect(response.status).toBe(200);
      const body = await response.json<{ outputs: { data: number[] }[] }>();
      const logits = body.outputs[0]!.data;
      const expected = testCase.logits.flat();
      expect(logits).toHaveLength(expected.length);
      logits.forEach((value, i) =>
        expect(Math.abs(value - expected[i]!)).toBeLessThanOrEqual(TOLERANCE),
      );
    },
  );

  it("classify from raw text (edge tokenizer in workerd) gives the same softmax", async () => {
    const response = await post("/v1/classify", {
      model: manifest.name,
      input: cases.map((testCase) => testCase.text),
    });
    const body = await response.json<{
      results: { labels: { label: string; score: number }[]; tokens: number }[];
    }>();
    cases.forEach((testCase, i) => {
      const [ham, spam] = testCase.logits[0]!;
      const expectedSpam = 1 / (1 + Math.exp(ham! - spam!));
      const result = body.results[i]!;
      expect(result.tokens).toBe(testCase.ids.length);
      // Batched with padding here, run alone in the reference: same scores within tolerance.
      expect(
        Math.abs(result.labels.find((entry) => entry.label === "spam")!.score - expectedSpam),
      ).toBeLessThanOrEqual(TOLERANCE);
    });
  });
});
