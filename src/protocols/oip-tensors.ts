// Open Inference Protocol JSON tensors ↔ runtime tensors. `data` is row-major, flat or
// nested; every element is checked against its datatype so a bad value is a 400 naming it.
import { ServiceError } from "../errors/service-error";
import { elementCount, type DataType, type Tensor } from "../tensors/tensor";
import { fromHalfBits, HALF_MAX, toHalfBits } from "./fp16";

const INTEGER_RANGES: Partial<Record<DataType, [number, number]>> = {
  INT8: [-128, 127],
  UINT8: [0, 255],
  INT16: [-32768, 32767],
  UINT16: [0, 65535],
  INT32: [-2147483648, 2147483647],
  UINT32: [0, 4294967295],
  INT64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  UINT64: [0, Number.MAX_SAFE_INTEGER],
};

function invalid(field: string, detail: string): ServiceError {
  return new ServiceError(400, "invalid_request", `${field}: ${detail}`, { field });
}

/**
 * Row-major elements of flat or nested `data`, without recursion: nesting deeper than the
 * tensor's rank is refused before it is walked, so no body can exhaust the stack.
 */
function flatten(data: unknown, maxDepth: number, field: string): unknown[] {
  const out: unknown[] = [];
  const stack: { items: unknown[]; next: number }[] = [];
  if (!Array.isArray(data)) return [data];
  stack.push({ items: data, next: 0 });
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next === top.items.length) {
      stack.pop();
      continue;
    }
    const item = top.items[top.next++];
    if (!Array.isArray(item)) {
      out.push(item);
      continue;
    }
    if (stack.length >= maxDepth)
      throw invalid(field, `nested deeper than the tensor's ${maxDepth} dimension(s)`);
    stack.push({ items: item, next: 0 });
  }
  return out;
}

function checkElements(values: unknown[], datatype: DataType, field: string): void {
  const range = INTEGER_RANGES[datatype];
  values.forEach((value, index) => {
    const ok =
      datatype === "BOOL"
        ? typeof value === "boolean"
        : datatype === "BYTES"
          ? typeof value === "string"
          : range !== undefined
            ? typeof value === "number" &&
              Number.isInteger(value) &&
              value >= range[0] &&
              value <= range[1]
            : datatype === "FP16"
              ? typeof value === "number" && Math.abs(value) <= HALF_MAX
              : typeof value === "number" && Number.isFinite(value);
    if (!ok)
      throw invalid(
        `${field}.${index}`,
        `${JSON.stringify(value) ?? "undefined"} is not a valid ${datatype} value`,
      );
  });
}

function toTypedArray(values: unknown[], datatype: DataType): Tensor["data"] {
  switch (datatype) {
    case "BOOL":
      return values.map(Boolean);
    case "BYTES":
      return values.map(String);
    case "INT64":
      return BigInt64Array.from(values, (value) => BigInt(Number(value)));
    case "UINT64":
      return BigUint64Array.from(values, (value) => BigInt(Number(value)));
    case "INT8":
      return Int8Array.from(values, Number);
    case "UINT8":
      return Uint8Array.from(values, Number);
    case "INT16":
      return Int16Array.from(values, Number);
    case "UINT16":
      return Uint16Array.from(values, Number);
    case "INT32":
      return Int32Array.from(values, Number);
    case "UINT32":
      return Uint32Array.from(values, Number);
    case "FP16":
      return Uint16Array.from(values, (value) => toHalfBits(Number(value)));
    case "FP32":
      return Float32Array.from(values, Number);
    case "FP64":
      return Float64Array.from(values, Number);
    default: {
      const unknown: never = datatype;
      throw new Error(`Unknown datatype ${String(unknown)}`);
    }
  }
}

export interface JsonTensor {
  name: string;
  datatype: DataType;
  shape: number[];
  data: unknown;
}

/** Converts a request tensor, checking that its data fills its shape with valid values. */
export function fromJsonTensor(tensor: JsonTensor, field: string): Tensor {
  const values = flatten(tensor.data, Math.max(tensor.shape.length, 1), `${field}.data`);
  const expected = elementCount(tensor.shape);
  if (values.length !== expected) {
    throw new ServiceError(
      422,
      "unprocessable_input",
      `${field}.data: shape [${tensor.shape.join(", ")}] ` +
        `needs ${expected} values, got ${values.length}`,
      {
        field: `${field}.data`,
      },
    );
  }
  checkElements(values, tensor.datatype, `${field}.data`);
  return {
    datatype: tensor.datatype,
    shape: tensor.shape,
    data: toTypedArray(values, tensor.datatype),
  };
}

/** Converts a runtime tensor to OIP JSON (flat row-major data; 64-bit ints as numbers). */
export function toJsonTensor(name: string, tensor: Tensor): JsonTensor & { data: unknown[] } {
  const { data } = tensor;
  let values: unknown[];
  if (data instanceof BigInt64Array || data instanceof BigUint64Array)
    values = Array.from(data, Number);
  else if (Array.isArray(data)) values = data;
  else if (tensor.datatype === "FP16") values = Array.from(data, fromHalfBits);
  else values = Array.from(data);
  return { name, datatype: tensor.datatype, shape: tensor.shape, data: values };
}
