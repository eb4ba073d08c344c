// Triton's model configuration extension (`GET /v2/models/{m}/config`): a model's tensor signature
// in Triton's model-config JSON, for the edge and the reference origin alike.
import type { DataType, TensorSpec } from "../tensors/tensor";

/** Triton's `DataType` enum names; BYTES is TYPE_STRING there. */
const TRITON_TYPES: Record<DataType, string> = {
  BOOL: "TYPE_BOOL",
  UINT8: "TYPE_UINT8",
  UINT16: "TYPE_UINT16",
  UINT32: "TYPE_UINT32",
  UINT64: "TYPE_UINT64",
  INT8: "TYPE_INT8",
  INT16: "TYPE_INT16",
  INT32: "TYPE_INT32",
  INT64: "TYPE_INT64",
  FP16: "TYPE_FP16",
  FP32: "TYPE_FP32",
  FP64: "TYPE_FP64",
  BYTES: "TYPE_STRING",
};

const tensor = (spec: TensorSpec) => ({
  name: spec.name,
  data_type: TRITON_TYPES[spec.datatype],
  dims: spec.shape,
});

/**
 * max_batch_size 0: the manifests declare every dimension, the batch one included, so dims
 * are the full shapes (-1 = any size), as Triton reads them for a non-batching model.
 *
 * So that clients that read a model's config (tritonclient's get_model_config) get one.
 */
export function modelConfig(model: {
  name: string;
  version: string;
  inputs: readonly TensorSpec[];
  outputs: readonly TensorSpec[];
  /** Shown as Triton's string parameters (e.g. task, runtime). */
  parameters?: Record<string, string>;
}) {
  const parameters = { version: model.version, ...model.parameters };
  return {
    name: model.name,
    platform: "onnxruntime_onnx",
    backend: "onnxruntime",
    max_batch_size: 0,
    input: model.inputs.map(tensor),
    output: model.outputs.map(tensor),
    parameters: Object.fromEntries(
      Object.entries(parameters).map(([key, value]) => [key, { string_value: value }]),
    ),
  };
}
