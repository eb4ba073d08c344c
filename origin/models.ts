// The models the reference origin serves: every folder under models/ with a manifest,
// verified by sha256 like the edge does, run natively by onnxruntime-node.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { ManifestSchema } from "../src/models/manifest";
import { createRegistry, type ModelEntry, type ModelRegistry } from "../src/models/registry";
import { createOrtRuntime } from "../src/runtime/ort-runtime";

/** Manifests and model files under `dir` (one folder per model), read into memory. */
export function readModels(dir: string): ModelEntry[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, "manifest.json")))
    .map((entry) => {
      const manifest: unknown = JSON.parse(readFileSync(join(dir, entry.name, "manifest.json"), "utf8"));
      const { file } = ManifestSchema.parse(manifest);
      const bytes = readFileSync(join(dir, entry.name, file));
      return { manifest, files: { [file]: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) } };
    });
}

/**
 * Every model runs natively, whatever its manifest says (the origin is where `runtime:
 * "origin"` models go). Execution providers in preference order, e.g. ["cuda", "cpu"]
 * on a GPU host whose onnxruntime-node has its CUDA binaries.
 */
export function nativeRegistry(entries: readonly ModelEntry[], executionProviders: readonly string[]): ModelRegistry {
  const sessionOptions: ort.InferenceSession.SessionOptions = { executionProviders: [...executionProviders], graphOptimizationLevel: "all" };
  return createRegistry(entries, {
    runtimeFor: (manifest, loadModel) =>
      createOrtRuntime(
        { kind: "native", Tensor: ort.Tensor, createSession: (model) => ort.InferenceSession.create(model, sessionOptions) },
        { inputs: manifest.inputs, outputs: manifest.outputs, loadModel },
      ),
  });
}
