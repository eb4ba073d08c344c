// Picks the runtime a manifest asks for; moving a model is a manifest change, not code.
import type { InferenceRuntime } from "./runtime";
import type { TensorSpec } from "./tensor";
import { createOriginRuntime, type OriginConfig } from "./origin/origin-runtime";
import { createWasmRuntime } from "./wasm/wasm-runtime";

export type { InferenceRuntime, RunResult, RunTimings } from "./runtime";
export type { OriginConfig } from "./origin/origin-runtime";
export { wasmMemoryBytes } from "./wasm/ort";

export interface RuntimeSpec {
  name: string;
  version: string;
  runtime: "wasm" | "origin";
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
}

/** No GPU origin configured: `runtime: "origin"` models are never ready. */
export const NO_ORIGIN: OriginConfig = { url: undefined, apiKey: undefined, timeoutMs: 30_000 };

/** The Worker's runtimes: each model where its manifest says, `runtime: "origin"` ones on `origin`. */
export function edgeRuntimes(origin: OriginConfig = NO_ORIGIN) {
  return (spec: RuntimeSpec, loadModel: () => Promise<Uint8Array>): InferenceRuntime => {
    switch (spec.runtime) {
      case "wasm":
        return createWasmRuntime({ inputs: spec.inputs, outputs: spec.outputs, loadModel });
      case "origin":
        return createOriginRuntime({ model: spec, inputs: spec.inputs, outputs: spec.outputs, origin });
      default: {
        const unknown: never = spec.runtime;
        throw new Error(`Unknown runtime ${String(unknown)}`);
      }
    }
  };
}
