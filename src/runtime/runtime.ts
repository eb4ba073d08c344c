// The service interface every inference runtime offers, as capabilities: tensors (one run),
// generation (a stream of token-id steps) and tensor streams.
import type { Tensor } from "../tensors/tensor";
import type { GenerationCapability } from "./generation";

export type {
  GenerationCapability,
  GenerationRequest,
  GenerationStep,
  FinishReason,
  SamplingParams,
  TokenLogprob,
} from "./generation";

export interface RunTimings {
  /** Milliseconds spent inside the runtime's run call (0 where the platform freezes timers). */
  runMs: number;
}

export interface RunResult {
  outputs: Record<string, Tensor>;
  timings: RunTimings;
}

export interface RunOptions {
  /** Outputs to compute; all declared outputs when absent. */
  outputNames?: readonly string[];
  signal?: AbortSignal;
}

/** One graph run: tensors in, tensors out. */
export interface TensorCapability {
  /** Feeds are checked against the graph's declared inputs before anything runs. */
  run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<RunResult>;
}

/** One step of an iterative tensor loop (a diffusion step's latent, the final pixels). */
export interface TensorStreamStep {
  step: number;
  outputs: Record<string, Tensor>;
  final: boolean;
}

/** Tensors in, a stream of per-step tensors out (Triton's generate_stream route): the
 * diffusion loop, on a tensor-stream origin (origin/tensor-stream-runtime.ts) or in this
 * isolate (wasm/diffusion-loop.ts). Breaking out or aborting `signal` stops the loop. */
export interface TensorStreamCapability {
  stream(
    feeds: Record<string, Tensor>,
    options: { parameters?: Record<string, unknown>; signal: AbortSignal },
  ): AsyncIterable<TensorStreamStep>;
}

/**
 * A task asks for the capability it needs and never knows whether its model runs in this isolate
 * (wasm), natively (the reference origin) or on a GPU origin over HTTP. Every call takes an
 * AbortSignal: a client that leaves stops the work behind it.
 */
export interface InferenceRuntime {
  /**
   * wasm: onnxruntime-web in the isolate; native: onnxruntime-node (the reference origin); origin:
   * HTTP to a GPU origin.
   */
  readonly kind: "wasm" | "native" | "origin";
  /** Loads and verifies what the capabilities need; idempotent, memoized per isolate. */
  load(signal?: AbortSignal): Promise<void>;
  /** False once a loaded model may have gone away (an origin that failed since), so the
   * next readiness check calls load() again. Absent: a loaded model stays loaded. */
  stillLoaded?(): boolean;
  readonly tensors?: TensorCapability;
  /** The model's other graphs that run beside its primary one, by their names in the manifest
   * (fraud-scoring: attribution); load() loads them too. */
  readonly graphs?: Readonly<Record<string, TensorCapability>>;
  readonly generation?: GenerationCapability;
  readonly tensorStream?: TensorStreamCapability;
}
