// One runtime over onnxruntime's common API, for onnxruntime-web in the isolate and
// onnxruntime-node on the reference origin: one lazily created, cached session per graph.
import type * as ort from "onnxruntime-web/wasm";
import { ServiceError } from "../errors/service-error";
import { checkFeeds, checkOutputNames } from "./feeds";
import type { InferenceRuntime, RunResult } from "./runtime";
import type { DataType, Tensor, TensorSpec } from "../tensors/tensor";

const ORT_TYPES = {
  BOOL: "bool",
  UINT8: "uint8",
  UINT16: "uint16",
  UINT32: "uint32",
  UINT64: "uint64",
  INT8: "int8",
  INT16: "int16",
  INT32: "int32",
  INT64: "int64",
  FP16: "float16",
  FP32: "float32",
  FP64: "float64",
  BYTES: "string",
} as const satisfies Record<DataType, ort.Tensor.Type>;

const OIP_TYPES = Object.fromEntries(
  Object.entries(ORT_TYPES).map(([oip, type]) => [type, oip]),
) as Record<ort.Tensor.Type, DataType | undefined>;

/** What a runtime needs from an onnxruntime package (web and node both offer it). */
export interface OrtEngine {
  kind: InferenceRuntime["kind"];
  /** The package's Tensor class: sessions only accept their own package's tensors. */
  Tensor: typeof ort.Tensor;
  /** `preOptimized`: the graph was optimized at build time (its manifest's `optimized`). */
  createSession(
    model: Uint8Array,
    options: { preOptimized: boolean },
  ): Promise<ort.InferenceSession>;
}

function fromOrtTensor(name: string, tensor: ort.Tensor): Tensor {
  const datatype = OIP_TYPES[tensor.type];
  if (datatype === undefined) {
    throw new ServiceError(
      500,
      "internal_error",
      `Output "${name}" has a type the service cannot return: ${tensor.type}`,
    );
  }
  // onnxruntime-web and onnxruntime-node both copy each output out of ORT's memory into a fresh
  // typed array of its own (test/unit/runtime/wasm/ort-runtime.test.ts), so a result outlives the
  // session's next run without another copy.
  return { datatype, shape: [...tensor.dims], data: tensor.data };
}

function errorMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}

export interface OrtRuntimeOptions {
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
  /** Produces verified model bytes; called once, on first load. */
  loadModel: () => Promise<Uint8Array>;
  /** The graph was optimized at build time (scripts/optimize-graphs.mjs). */
  preOptimized?: boolean;
}

/**
 * A runtime whose model runs in this process with the given onnxruntime engine.
 *
 * A run cannot be interrupted inside ORT, so an aborted signal is checked before each one. Runs on
 * one session take turns: onnxruntime-web's run() puts its input and output name arrays on the WASM
 * stack and then awaits, so a second run begun meanwhile restores the stack under the first and ORT
 * reads emptied names ("input name cannot be empty"; see docs/sources.md). In an isolate's one
 * thread taking turns costs nothing: the runs could not overlap anyway.
 */
export function createOrtRuntime(engine: OrtEngine, options: OrtRuntimeOptions): InferenceRuntime {
  let session: Promise<ort.InferenceSession> | undefined;
  /** The session's last run: the next one starts when it has settled. */
  let previous: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(run: () => Promise<T>): Promise<T> => {
    const turn = previous.then(run);
    previous = turn.catch(() => undefined);
    return turn;
  };

  const getSession = (): Promise<ort.InferenceSession> => {
    if (session === undefined) {
      const created = options
        .loadModel()
        .then((model) =>
          engine.createSession(model, { preOptimized: options.preOptimized === true }),
        );
      // A failed load is not cached: the next request tries again (e.g. R2 was briefly down).
      created.catch(() => {
        if (session === created) session = undefined;
      });
      session = created;
    }
    return session;
  };

  return {
    kind: engine.kind,
    async load() {
      await getSession();
    },
    tensors: {
      run: async (feeds, { outputNames, signal } = {}) => {
        signal?.throwIfAborted();
        checkFeeds(options.inputs, feeds);
        if (outputNames !== undefined) checkOutputNames(options.outputs, outputNames);
        const active = await getSession();
        const ortFeeds = Object.fromEntries(
          Object.entries(feeds).map(([name, tensor]) => [
            name,
            new engine.Tensor(ORT_TYPES[tensor.datatype], tensor.data, tensor.shape),
          ]),
        );
        let started = 0;
        let results: ort.InferenceSession.ReturnType;
        try {
          results = await inTurn(() => {
            // A request that left while it waited its turn does not run.
            signal?.throwIfAborted();
            started = performance.now();
            return outputNames === undefined
              ? active.run(ortFeeds)
              : active.run(ortFeeds, [...outputNames]);
          });
        } catch (error) {
          if (signal?.aborted && error === signal.reason) throw error;
          // Feeds passed the signature checks, so what ORT refuses here is their content
          // (e.g. a token id beyond the embedding table): the caller's input, not our failure.
          throw new ServiceError(
            422,
            "unprocessable_input",
            `The model could not run on this input: ${errorMessage(error)}`,
            {
              field: "inputs",
              cause: error,
            },
          );
        }
        const runMs = performance.now() - started;
        const outputs = Object.fromEntries(
          Object.entries(results).map(([name, tensor]) => [name, fromOrtTensor(name, tensor)]),
        );
        return { outputs, timings: { runMs } } satisfies RunResult;
      },
    },
  };
}
