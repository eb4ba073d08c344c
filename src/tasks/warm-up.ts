// A model's warm-up input, as Triton's `model_warmup` with `zero_data`: every declared input
// zero-filled, dimensions of any size (-1) set to 1. The first run of a session costs far
// more than the next ones (ORT plans the graph's execution and allocates its buffers), so a
// preloaded model runs once on this before its first request.
import type { NumericArray, Tensor, TensorSpec } from "../tensors/tensor";
import { elementCount } from "../tensors/tensor";

function zeros(datatype: Tensor["datatype"], length: number): Tensor["data"] {
  switch (datatype) {
    case "BOOL":
      return Array.from({ length }, () => false);
    case "BYTES":
      return Array.from({ length }, () => "");
    default:
      return zeroNumbers(datatype, length);
  }
}

function zeroNumbers(datatype: Exclude<Tensor["datatype"], "BOOL" | "BYTES">, length: number): NumericArray {
  switch (datatype) {
    case "UINT8":
      return new Uint8Array(length);
    case "UINT16":
    case "FP16":
      return new Uint16Array(length);
    case "UINT32":
      return new Uint32Array(length);
    case "UINT64":
      return new BigUint64Array(length);
    case "INT8":
      return new Int8Array(length);
    case "INT16":
      return new Int16Array(length);
    case "INT32":
      return new Int32Array(length);
    case "INT64":
      return new BigInt64Array(length);
    case "FP32":
      return new Float32Array(length);
    case "FP64":
      return new Float64Array(length);
    default: {
      const unknown: never = datatype;
      throw new Error(`unknown datatype ${String(unknown)}`);
    }
  }
}

/** Zero-filled feeds for the declared inputs (-1 dimensions → 1). */
export function zeroFeeds(inputs: readonly TensorSpec[]): Record<string, Tensor> {
  return Object.fromEntries(
    inputs.map((spec) => {
      const shape = spec.shape.map((dim) => (dim === -1 ? 1 : dim));
      return [spec.name, { datatype: spec.datatype, shape, data: zeros(spec.datatype, elementCount(shape)) }];
    }),
  );
}
