// The origin's manifest reading (origin/manifests.ts): tensor models in the shape before
// the contract reshape (one graph at the top level) and after it (named graphs, "model"
// run), text-generation models with the graph `generation.graph` names or an override.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseManifest } from "../../origin/manifests";

const spec = [{ name: "x", datatype: "FP32", shape: [-1, 2] }];
const graph = (file: string) => ({ file, sha256: "a".repeat(64), bytes: 1, inputs: spec, outputs: spec });
const generation = { graph: "decoder", contextLength: 512, vocabSize: 4096, layers: 4, kvHeads: 4, headDim: 64, bosTokenId: 1, eosTokenId: 2, stopTokenIds: [2] };

describe("origin manifests", () => {
  it("reads a tensor model with its graph at the top level (the shipped manifests)", () => {
    const manifest = parseManifest(JSON.parse(readFileSync("models/spam-classifier/manifest.json", "utf8")));
    expect(manifest).toMatchObject({ kind: "tensor", name: "spam-classifier", graph: { file: "model.int8.onnx" } });
  });

  it("reads a tensor model with named graphs and runs its \"model\" graph", () => {
    const manifest = parseManifest({ name: "m", version: "1", task: "raw", graphs: { model: graph("a.onnx"), reference: graph("b.onnx") } });
    expect(manifest).toMatchObject({ kind: "tensor", graph: { file: "a.onnx" } });
    expect(() => parseManifest({ name: "m", version: "1", task: "raw", graphs: { other: graph("a.onnx") } })).toThrow(/no "model" graph/);
  });

  it("reads a text-generation model: generation.graph, or the override, or a clear error", () => {
    const json = { name: "llm", version: "1", task: "text-generation", graphs: { decoder: graph("int8.onnx"), "decoder-fp32": graph("fp32.onnx") }, generation };
    expect(parseManifest(json)).toMatchObject({ kind: "generation", graph: { file: "int8.onnx" }, generation: { contextLength: 512 } });
    expect(parseManifest(json, "decoder-fp32")).toMatchObject({ graph: { file: "fp32.onnx" } });
    expect(() => parseManifest(json, "nope")).toThrow(/no graph "nope"/);
  });
});
