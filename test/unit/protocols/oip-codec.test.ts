// The OIP codec as pure functions: binary layouts for every datatype (checked against the
// bytes Triton's Python client produced), FP16 rounding, bounded JSON, and whole requests
// parsed from Request objects and responses encoded back.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ServiceError } from "../../../src/errors/service-error";
import { parseBoundedJson } from "../../../src/protocols/bounded-json";
import { fromHalfBits, toHalfBits } from "../../../src/protocols/fp16";
import { decodeBinaryTensor, encodeBinaryTensor } from "../../../src/protocols/oip-binary";
import { encodeInferResponse, parseInferRequest } from "../../../src/protocols/oip-infer";
import { dataTypes, type Tensor } from "../../../src/tensors/tensor";

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return `${error.status} ${error.field}`;
    throw error;
  }
  return "no error";
}

async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return `${error.status} ${error.field}`;
    throw error;
  }
  return "no error";
}

const sample: Record<(typeof dataTypes)[number], Tensor["data"]> = {
  BOOL: [true, false, true, true],
  UINT8: new Uint8Array([0, 1, 128, 255]),
  UINT16: new Uint16Array([0, 1, 40000, 65535]),
  UINT32: new Uint32Array([0, 1, 3e9, 4294967295]),
  UINT64: new BigUint64Array([0n, 1n, 2n ** 63n, 2n ** 64n - 1n]),
  INT8: new Int8Array([-128, -1, 0, 127]),
  INT16: new Int16Array([-32768, -1, 0, 32767]),
  INT32: new Int32Array([-2147483648, -1, 0, 2147483647]),
  INT64: new BigInt64Array([-(2n ** 63n), -1n, 0n, 2n ** 63n - 1n]),
  FP16: new Uint16Array([0x3c00, 0x3800, 0xc000, 0x7bff]),
  FP32: new Float32Array([1.5, -0.25, 3.4e38, 1e-45]),
  FP64: new Float64Array([Math.PI, -1e308, 5e-324, 0]),
  BYTES: ["hello", "wörld", "", "💡"],
};

describe("binary tensor data", () => {
  it("round-trips every datatype exactly", () => {
    for (const datatype of dataTypes) {
      const tensor: Tensor = { datatype, shape: [2, 2], data: sample[datatype] };
      const bytes = encodeBinaryTensor(tensor);
      expect(decodeBinaryTensor(bytes, datatype, [2, 2], "f"), datatype).toEqual(sample[datatype]);
    }
  });

  it("reads an unaligned slice (binary data may start at any offset of the body)", () => {
    const bytes = new Uint8Array(1 + 16);
    bytes.set(new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer), 1);
    expect(decodeBinaryTensor(bytes.subarray(1), "FP32", [4], "f")).toEqual(
      new Float32Array([1, 2, 3, 4]),
    );
  });

  it("lays BYTES and FP16 out exactly as tritonclient serialized them", () => {
    // tritonclient/utils serialize_byte_tensor: <I length> + bytes per element; FP16 numpy
    // tobytes().
    const fixture = JSON.parse(
      readFileSync("test/fixtures/tritonclient/bytes-fp16.request.json", "utf8"),
    );
    const body = Buffer.from(fixture.body_base64, "base64");
    const headerLength = Number(
      fixture.headers.find(([name]: [string]) => name === "inference-header-content-length")[1],
    );
    const bytes = encodeBinaryTensor({ datatype: "BYTES", shape: [2], data: ["hello", "wörld"] });
    const half = encodeBinaryTensor({
      datatype: "FP16",
      shape: [2, 2],
      data: Uint16Array.from([1, 0.5, -2, 65504], toHalfBits),
    });
    expect(Buffer.from(body.subarray(headerLength))).toEqual(Buffer.concat([bytes, half]));
  });

  it("refuses bytes that do not fit the shape, naming the field given", () => {
    expect(
      failure(() =>
        decodeBinaryTensor(
          new Uint8Array(12),
          "FP32",
          [2, 2],
          "inputs.0.parameters.binary_data_size",
        ),
      ),
    ).toBe("400 inputs.0.parameters.binary_data_size");
    expect(failure(() => decodeBinaryTensor(new Uint8Array([2, 0]), "BOOL", [2], "f"))).toBe(
      "400 f",
    );
    expect(failure(() => decodeBinaryTensor(new Uint8Array([1, 0, 0]), "BYTES", [1], "f"))).toBe(
      "400 f",
    );
    expect(
      failure(() => decodeBinaryTensor(new Uint8Array([1, 0, 0, 0, 0xff]), "BYTES", [1], "f")),
    ).toBe("400 f"); // not UTF-8
    expect(
      failure(() =>
        decodeBinaryTensor(new Uint8Array(new Float32Array([Number.NaN]).buffer), "FP32", [1], "f"),
      ),
    ).toBe("400 f");
  });
});

describe("FP16", () => {
  it("converts known values both ways, rounding to nearest even", () => {
    const cases: [number, number][] = [
      [1, 0x3c00],
      [0.5, 0x3800],
      [-2, 0xc000],
      [65504, 0x7bff],
      [2 ** -24, 0x0001],
      [2 ** -14, 0x0400],
      [0, 0],
      [Infinity, 0x7c00],
      [1e6, 0x7c00],
    ];
    for (const [value, bits] of cases) {
      expect(toHalfBits(value), String(value)).toBe(bits);
      if (Number.isFinite(value) && value <= 65504) expect(fromHalfBits(bits)).toBe(value);
    }
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00); // halfway: stays even
    expect(toHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02); // halfway: rounds up to even
    expect(toHalfBits(65519)).toBe(0x7bff);
    expect(Number.isNaN(fromHalfBits(toHalfBits(Number.NaN)))).toBe(true);
  });
});

describe("bounded JSON", () => {
  it("names the member that nests too deep, without recursing", () => {
    const deep = `{"inputs":[{"name":"x","data":${"[".repeat(100_000)}${"]".repeat(100_000)}}]}`;
    expect(failure(() => parseBoundedJson(deep))).toBe("400 inputs.0.data");
    expect(
      failure(() => parseBoundedJson(`{"a":{"b\\"c":${'{"k":'.repeat(40)}1${"}".repeat(40)}}}`)),
    ).toBe(`400 ${["a", 'b"c', ...Array<string>(30).fill("k")].join(".")}`);
    expect(parseBoundedJson('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}')).toEqual({
      a: "[".repeat(39),
    });
    expect(failure(() => parseBoundedJson('{"a": '))).toBe("400 body");
  });
});

describe("parseInferRequest and encodeInferResponse", () => {
  const options = { maxBytes: 1 << 20, maxElements: 1_000_000 };
  const header = {
    id: "x",
    inputs: [{ name: "ids", shape: [2], datatype: "INT64", parameters: { binary_data_size: 16 } }],
    parameters: { binary_data_output: true },
  };

  function binaryRequest(init: { gzip?: boolean } = {}): Request {
    const json = Buffer.from(JSON.stringify(header));
    const body = Buffer.concat([json, Buffer.from(new BigInt64Array([7n, -8n]).buffer)]);
    return new Request("http://x/v2/models/m/infer", {
      method: "POST",
      headers: {
        "inference-header-content-length": String(json.byteLength),
        ...(init.gzip ? { "content-encoding": "gzip" } : {}),
      },
      body: init.gzip ? gzipSync(body) : body,
    });
  }

  it(
    "decodes binary inputs, gzip or not, and " + "encodes binary outputs with the header length",
    async () => {
      for (const gzip of [false, true]) {
        const call = await parseInferRequest(binaryRequest({ gzip }), options);
        expect(call.inputs.ids).toEqual({
          datatype: "INT64",
          shape: [2],
          data: new BigInt64Array([7n, -8n]),
        });
        expect(call.binaryOutput("anything")).toBe(true);
        const response = encodeInferResponse(
          {
            model_name: "m",
            id: call.id,
            outputs: { y: { datatype: "BYTES", shape: [1], data: ["ok"] } },
          },
          call,
        );
        const length = Number(response.headers.get("inference-header-content-length"));
        const bytes = new Uint8Array(await response.arrayBuffer());
        expect(JSON.parse(Buffer.from(bytes.subarray(0, length)).toString())).toEqual({
          model_name: "m",
          id: "x",
          outputs: [
            { name: "y", datatype: "BYTES", shape: [1], parameters: { binary_data_size: 6 } },
          ],
        });
        expect(Array.from(bytes.subarray(length))).toEqual([2, 0, 0, 0, 111, 107]);
      }
    },
  );

  it("JSON FP16 data becomes half floats and back", async () => {
    const request = new Request("http://x/", {
      method: "POST",
      body: JSON.stringify({
        inputs: [{ name: "h", shape: [2], datatype: "FP16", data: [1.5, -65504] }],
      }),
    });
    const call = await parseInferRequest(request, options);
    expect(call.inputs.h?.data).toEqual(new Uint16Array([0x3e00, 0xfbff]));
    const response = encodeInferResponse({ model_name: "m", outputs: call.inputs }, call);
    expect(await response.json()).toMatchObject({
      outputs: [{ name: "h", datatype: "FP16", data: [1.5, -65504] }],
    });
    const tooBig = new Request("http://x/", {
      method: "POST",
      body: JSON.stringify({
        inputs: [{ name: "h", shape: [1], datatype: "FP16", data: [70000] }],
      }),
    });
    expect(await failureOf(parseInferRequest(tooBig, options))).toBe("400 inputs.0.data.0");
  });

  it("bounds the raw and the inflated body", async () => {
    const big = (gzip: boolean) =>
      new Request("http://x/", {
        method: "POST",
        headers: gzip ? { "content-encoding": "gzip" } : {},
        body: gzip ? gzipSync(Buffer.alloc(4096, 32)) : Buffer.alloc(4096, 32),
      });
    expect(await failureOf(parseInferRequest(big(false), { ...options, maxBytes: 1024 }))).toBe(
      "413 undefined",
    );
    expect(await failureOf(parseInferRequest(big(true), { ...options, maxBytes: 1024 }))).toBe(
      "413 undefined",
    );
    const huge = new Request("http://x/", { method: "POST", body: Buffer.alloc(2 << 20, 32) });
    expect(
      await failureOf(parseInferRequest(huge, { ...options, maxBytes: Number(undefined) })),
    ).toBe("413 undefined"); // unset: 1 MiB, not unbounded
  });
});
