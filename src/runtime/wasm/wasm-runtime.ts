// The in-isolate runtime: onnxruntime-web (WASM, one thread) through the shared ORT runtime.
import type { InferenceRuntime } from "../runtime";
import { createOrtRuntime, type OrtRuntimeOptions } from "../ort-runtime";
import { createSession, ort } from "./ort";

/** A runtime whose model runs in this isolate with onnxruntime-web. */
export function createWasmRuntime(options: OrtRuntimeOptions): InferenceRuntime {
  return createOrtRuntime({ kind: "wasm", Tensor: ort.Tensor, createSession }, options);
}
