// Picks the runtime a manifest asks for; moving a model is a manifest change, not code.
import type { InferenceRuntime } from "./runtime";
import type { TensorSpec } from "./tensor";
import { createWasmRuntime } from "./wasm/wasm-runtime";

export type { InferenceRuntime, RunResult, RunTimings } from "./runtime";

export interface RuntimeSpec {
  runtime: "wasm";
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
}

/** Creates the runtime named by a model's manifest. */
export function createRuntime(spec: RuntimeSpec, loadModel: () => Promise<Uint8Array>): InferenceRuntime {
  switch (spec.runtime) {
    case "wasm":
      return createWasmRuntime({ inputs: spec.inputs, outputs: spec.outputs, loadModel });
    default: {
      const unknown: never = spec.runtime;
      throw new Error(`Unknown runtime ${String(unknown)}`);
    }
  }
}
