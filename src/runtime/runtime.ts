// The one interface every inference runtime offers, so a task never knows whether its
// model runs in this isolate (wasm) or on a GPU origin.
import type { Tensor } from "./tensor";

export interface RunTimings {
  /** Milliseconds spent inside the runtime's run call (0 where the platform freezes timers). */
  runMs: number;
}

export interface RunResult {
  outputs: Record<string, Tensor>;
  timings: RunTimings;
}

export interface InferenceRuntime {
  /** wasm: onnxruntime-web in the isolate; native: onnxruntime-node (the reference origin); origin: OIP v2 over HTTP. */
  readonly kind: "wasm" | "native" | "origin";
  /** Loads and verifies the model; idempotent, memoized per isolate. */
  load(): Promise<void>;
  /** False once a loaded model may have gone away (an origin that failed since), so the
   * next readiness check calls load() again. Absent: a loaded model stays loaded. */
  stillLoaded?(): boolean;
  /** Runs the model once; feeds are checked against the manifest before anything runs. */
  run(feeds: Record<string, Tensor>, outputNames?: readonly string[]): Promise<RunResult>;
}
