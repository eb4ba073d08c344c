// Tensors as the Open Inference Protocol names them: a neutral home that models/, protocols/,
// runtime/, tasks and the /v2 routes all import, so nothing converts between private tensor types.
import { z } from "zod";

export const dataTypes = [
  "BOOL",
  "UINT8",
  "UINT16",
  "UINT32",
  "UINT64",
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "FP16",
  "FP32",
  "FP64",
  "BYTES",
] as const;
export const DataTypeSchema = z.enum(dataTypes);
export type DataType = z.infer<typeof DataTypeSchema>;

/** A tensor's declared signature; -1 marks a dimension of any size. */
export const TensorSpecSchema = z.object({
  name: z.string().min(1),
  datatype: DataTypeSchema,
  shape: z.array(z.number().int().min(-1)),
});
export type TensorSpec = z.infer<typeof TensorSpecSchema>;

export type NumericArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

export interface Tensor {
  datatype: DataType;
  shape: number[];
  data: NumericArray | boolean[] | string[];
}

/** Number of elements a shape holds. */
export function elementCount(shape: readonly number[]): number {
  return shape.reduce((count, dim) => count * dim, 1);
}

/** Whether a concrete shape fits a declared one (same rank, -1 matches any size). */
export function shapeMatches(declared: readonly number[], actual: readonly number[]): boolean {
  return (
    declared.length === actual.length && declared.every((dim, i) => dim === -1 || dim === actual[i])
  );
}
