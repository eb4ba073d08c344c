// Triton's binary tensor data extension: a tensor's elements as raw little-endian bytes, row-major;
// BYTES elements each length-prefixed; BOOL one byte per element.
import { ServiceError } from "../errors/service-error";
import { elementCount, type DataType, type Tensor } from "../tensors/tensor";

const ELEMENT_BYTES: Record<Exclude<DataType, "BYTES">, number> = {
  BOOL: 1,
  UINT8: 1,
  INT8: 1,
  UINT16: 2,
  INT16: 2,
  FP16: 2,
  UINT32: 4,
  INT32: 4,
  FP32: 4,
  UINT64: 8,
  INT64: 8,
  FP64: 8,
};

// Typed arrays read and write the platform's byte order; every Workers and Node platform
// is little-endian, and this says so loudly if one ever is not.
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1)
  throw new Error("The binary tensor codec needs a little-endian platform");

function invalid(field: string, detail: string): ServiceError {
  return new ServiceError(400, "invalid_request", `${field}: ${detail}`, { field });
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

function decodeBytes(bytes: Uint8Array, count: number, field: string): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values: string[] = [];
  let offset = 0;
  while (offset < bytes.byteLength) {
    if (offset + 4 > bytes.byteLength)
      throw invalid(field, `BYTES element ${values.length} has a truncated 4-byte length`);
    const length = view.getUint32(offset, true);
    offset += 4;
    if (offset + length > bytes.byteLength)
      throw invalid(
        field,
        `BYTES element ${values.length} claims ${length} bytes past the end of its data`,
      );
    try {
      values.push(utf8.decode(bytes.subarray(offset, offset + length)));
    } catch {
      throw invalid(field, `BYTES element ${values.length} is not UTF-8 text`);
    }
    offset += length;
    if (values.length > count) break;
  }
  if (values.length !== count)
    throw invalid(
      field,
      `the shape needs ${count} BYTES elements, the data holds ${values.length}`,
    );
  return values;
}

/**
 * Reads one tensor's binary data. `field` names the input's `binary_data_size`, which is what
 * a caller got wrong when the byte count does not fit the shape and datatype.
 */
export function decodeBinaryTensor(
  bytes: Uint8Array,
  datatype: DataType,
  shape: number[],
  field: string,
): Tensor["data"] {
  const count = elementCount(shape);
  if (datatype === "BYTES") return decodeBytes(bytes, count, field);
  const size = ELEMENT_BYTES[datatype];
  if (bytes.byteLength !== count * size) {
    throw invalid(
      field,
      `${bytes.byteLength} bytes do not hold shape ` +
        `[${shape.join(", ")}] of ${datatype} (${count * size} bytes)`,
    );
  }
  // A copy: the slice may sit at any offset of the body, typed arrays need aligned starts.
  const buffer = bytes.slice().buffer;
  switch (datatype) {
    case "BOOL": {
      const flags = new Uint8Array(buffer);
      const bad = flags.findIndex((flag) => flag > 1);
      if (bad >= 0) throw invalid(field, `BOOL element ${bad} is ${flags[bad]}, not 0 or 1`);
      return Array.from(flags, (flag) => flag === 1);
    }
    case "UINT8":
      return new Uint8Array(buffer);
    case "INT8":
      return new Int8Array(buffer);
    case "UINT16":
    case "FP16":
      return new Uint16Array(buffer);
    case "INT16":
      return new Int16Array(buffer);
    case "UINT32":
      return new Uint32Array(buffer);
    case "INT32":
      return new Int32Array(buffer);
    case "FP32":
      return checkFinite(new Float32Array(buffer), field);
    case "UINT64":
      return new BigUint64Array(buffer);
    case "INT64":
      return new BigInt64Array(buffer);
    case "FP64":
      return checkFinite(new Float64Array(buffer), field);
    default: {
      const unknown: never = datatype;
      throw new Error(`Unknown datatype ${String(unknown)}`);
    }
  }
}

/** NaN and ±Inf are refused in binary exactly as JSON cannot carry them. */
function checkFinite<T extends Float32Array | Float64Array>(values: T, field: string): T {
  const bad = values.findIndex((value) => !Number.isFinite(value));
  if (bad >= 0) throw invalid(field, `element ${bad} is ${values[bad]}, not a finite number`);
  return values;
}

/** A tensor's elements as the binary extension lays them out. */
export function encodeBinaryTensor(tensor: Tensor): Uint8Array {
  const { data } = tensor;
  if (!Array.isArray(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const values: readonly (string | boolean)[] = data;
  if (tensor.datatype === "BYTES") {
    const parts = values.map((value) => encoder.encode(String(value)));
    const out = new Uint8Array(parts.reduce((sum, part) => sum + 4 + part.byteLength, 0));
    const view = new DataView(out.buffer);
    let offset = 0;
    for (const part of parts) {
      view.setUint32(offset, part.byteLength, true);
      out.set(part, offset + 4);
      offset += 4 + part.byteLength;
    }
    return out;
  }
  return Uint8Array.from(values, (value) => (value === true ? 1 : 0));
}
