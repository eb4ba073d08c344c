// The tensor engine: one verified onnxruntime session per tensor model, created once at
// start, running Open Inference Protocol requests (feeds in, named outputs out).
import { ServiceError } from "../../src/errors/service-error";
import { dataTypes, type DataType, type Tensor } from "../../src/tensors/tensor";
import type { Graph } from "../manifests";
import { checkFeeds, checkOutputNames } from "./feeds";
import { createSession, ort, type SessionSettings } from "./onnx-session";

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

const OIP_TYPES = new Map<string, DataType>(
  dataTypes.map((datatype) => [ORT_TYPES[datatype], datatype]),
);

export interface TensorEngine {
  readonly graph: Graph;
  run(
    feeds: Record<string, Tensor>,
    outputNames?: readonly string[],
  ): Promise<{ outputs: Record<string, Tensor>; runMs: number }>;
}

function fromOrt(name: string, tensor: ort.Tensor): Tensor {
  const datatype = OIP_TYPES.get(tensor.type);
  if (datatype === undefined)
    throw new ServiceError(
      500,
      "internal_error",
      `Output "${name}" has a type the origin cannot return: ${tensor.type}`,
    );
  return { datatype, shape: [...tensor.dims], data: tensor.data };
}

/** Loads the graph's verified bytes into a session and returns the engine running it. */
export async function createTensorEngine(
  graph: Graph,
  model: Uint8Array,
  settings: SessionSettings,
): Promise<TensorEngine> {
  const session = await createSession(model, settings);
  return {
    graph,
    async run(feeds, outputNames) {
      checkFeeds(graph.inputs, feeds);
      if (outputNames !== undefined) checkOutputNames(graph.outputs, outputNames);
      const ortFeeds = Object.fromEntries(
        Object.entries(feeds).map(([name, t]) => [
          name,
          new ort.Tensor(ORT_TYPES[t.datatype], t.data, t.shape),
        ]),
      );
      const started = performance.now();
      let results: ort.InferenceSession.ReturnType;
      try {
        results = await session.run(
          ortFeeds,
          outputNames === undefined ? graph.outputs.map((o) => o.name) : [...outputNames],
        );
      } catch (error) {
        // The feeds passed the signature checks, so what ORT refuses is their content
        // (e.g. a token id beyond the embedding table): the caller's input.
        const message = (error instanceof Error ? error.message : String(error)).slice(0, 300);
        throw new ServiceError(
          422,
          "unprocessable_input",
          `The model could not run on this input: ${message}`,
          { field: "inputs", cause: error },
        );
      }
      const runMs = performance.now() - started;
      return {
        outputs: Object.fromEntries(
          Object.entries(results).map(([name, t]) => [name, fromOrt(name, t)]),
        ),
        runMs,
      };
    },
  };
}
