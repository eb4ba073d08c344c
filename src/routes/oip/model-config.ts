// Triton's model configuration extension (`GET /v2/models/{m}/config`): the manifest said
// in Triton's model-config JSON (triton-inference-server/common protobuf/model_config.proto),
// so clients that read a model's config (e.g. tritonclient's get_model_config) get one.
import type { Manifest } from "../../models/manifest";
import type { DataType, TensorSpec } from "../../runtime/tensor";

/** Triton's `DataType` enum names; BYTES is TYPE_STRING there. */
const TRITON_TYPES: Record<DataType, string> = {
  BOOL: "TYPE_BOOL", UINT8: "TYPE_UINT8", UINT16: "TYPE_UINT16", UINT32: "TYPE_UINT32", UINT64: "TYPE_UINT64",
  INT8: "TYPE_INT8", INT16: "TYPE_INT16", INT32: "TYPE_INT32", INT64: "TYPE_INT64",
  FP16: "TYPE_FP16", FP32: "TYPE_FP32", FP64: "TYPE_FP64", BYTES: "TYPE_STRING",
};

const tensor = (spec: TensorSpec) => ({ name: spec.name, data_type: TRITON_TYPES[spec.datatype], dims: spec.shape });

/**
 * max_batch_size 0: the manifests declare every dimension, the batch one included, so dims
 * are the full shapes (-1 = any size), as Triton reads them for a non-batching model.
 */
export function modelConfig(manifest: Manifest) {
  return {
    name: manifest.name,
    platform: "onnxruntime_onnx",
    backend: "onnxruntime",
    max_batch_size: 0,
    input: manifest.inputs.map(tensor),
    output: manifest.outputs.map(tensor),
    parameters: {
      version: { string_value: manifest.version },
      task: { string_value: manifest.task },
      runtime: { string_value: manifest.runtime },
    },
  };
}
