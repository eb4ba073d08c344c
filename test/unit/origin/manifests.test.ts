// The origin's manifest reading (origin/manifests.ts): the shared schema, then the graph
// each engine runs — "model" for tensor models, `generation.graph` (or an override) for a
// text-generation model — with a clear error when that graph is missing.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseManifest } from "../../../origin/manifests";

const shipped = (name: string): Record<string, unknown> & { graphs: Record<string, unknown> } =>
  JSON.parse(readFileSync(`models/${name}/manifest.json`, "utf8"));

describe("origin manifests", () => {
  it('reads a shipped tensor model and runs its "model" graph', () => {
    expect(parseManifest(shipped("spam-classifier"))).toMatchObject({
      kind: "tensor",
      name: "spam-classifier",
      graph: { file: "model.int8.opt.onnx" },
    });
    const { model, ...others } = shipped("spam-classifier").graphs;
    expect(model).toBeDefined();
    // The shared schema already refuses a tensor model without the graph it runs.
    expect(() => parseManifest({ ...shipped("spam-classifier"), graphs: others })).toThrow(
      /graph \\"model\\" is missing/,
    );
  });

  it("reads the tiny LLM: generation.graph, or the override, or a clear error", () => {
    const json = shipped("tiny-llm");
    expect(parseManifest(json)).toMatchObject({
      kind: "generation",
      graph: { file: "model.int8.onnx" },
      generation: { graph: "decoder" },
    });
    expect(parseManifest(json, "decoder-fp32")).toMatchObject({
      graph: { file: "model.fp32.onnx" },
    });
    expect(() => parseManifest(json, "nope")).toThrow(/no graph "nope"/);
  });

  it("refuses a manifest the shared schema refuses", () => {
    expect(() => parseManifest({ name: "m", version: "1", task: "raw" })).toThrow();
  });
});
