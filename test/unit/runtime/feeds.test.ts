import { describe, expect, it } from "vitest";
import { ServiceError } from "../../../src/errors/service-error";
import { checkFeeds } from "../../../src/runtime/feeds";
import { fromJsonTensor, toJsonTensor } from "../../../src/protocols/oip-tensors";
import type { TensorSpec } from "../../../src/tensors/tensor";

const specs: TensorSpec[] = [{ name: "x", datatype: "FP32", shape: [-1, 3] }];

function fieldOf(run: () => void): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ServiceError) return `${error.status} ${error.field}`;
    throw error;
  }
  return undefined;
}

describe("checkFeeds", () => {
  it("accepts a feed that fits a dynamic dimension", () => {
    expect(
      fieldOf(() =>
        checkFeeds(specs, { x: { datatype: "FP32", shape: [2, 3], data: new Float32Array(6) } }),
      ),
    ).toBeUndefined();
  });

  it("names the input and what is wrong with it", () => {
    expect(fieldOf(() => checkFeeds(specs, {}))).toBe("422 inputs.x");
    expect(
      fieldOf(() =>
        checkFeeds(specs, { x: { datatype: "FP64", shape: [1, 3], data: new Float64Array(3) } }),
      ),
    ).toBe("422 inputs.x.datatype");
    expect(
      fieldOf(() =>
        checkFeeds(specs, { x: { datatype: "FP32", shape: [1, 4], data: new Float32Array(4) } }),
      ),
    ).toBe("422 inputs.x.shape");
    expect(
      fieldOf(() =>
        checkFeeds(specs, { x: { datatype: "FP32", shape: [1, 3], data: new Float32Array(2) } }),
      ),
    ).toBe("422 inputs.x.data");
    expect(
      fieldOf(() =>
        checkFeeds(specs, {
          x: { datatype: "FP32", shape: [1, 3], data: new Float32Array(3) },
          y: { datatype: "FP32", shape: [1], data: new Float32Array(1) },
        }),
      ),
    ).toBe("422 inputs.y");
  });
});

describe("OIP JSON tensors", () => {
  it("reads nested and flat data into typed arrays", () => {
    const nested = fromJsonTensor(
      {
        name: "ids",
        datatype: "INT64",
        shape: [2, 2],
        data: [
          [1, 2],
          [3, 4],
        ],
      },
      "inputs.0",
    );
    expect(nested.data).toEqual(new BigInt64Array([1n, 2n, 3n, 4n]));
    const flat = fromJsonTensor(
      { name: "ids", datatype: "FP32", shape: [2, 2], data: [1, 2, 3, 4.5] },
      "inputs.0",
    );
    expect(flat.data).toEqual(new Float32Array([1, 2, 3, 4.5]));
  });

  it("rejects values the datatype cannot hold, naming the element", () => {
    expect(
      fieldOf(() =>
        fromJsonTensor({ name: "a", datatype: "UINT8", shape: [2], data: [1, 256] }, "inputs.0"),
      ),
    ).toBe("400 inputs.0.data.1");
    expect(
      fieldOf(() =>
        fromJsonTensor({ name: "a", datatype: "FP32", shape: [1], data: ["1"] }, "inputs.0"),
      ),
    ).toBe("400 inputs.0.data.0");
    expect(
      fieldOf(() =>
        fromJsonTensor({ name: "a", datatype: "BOOL", shape: [1], data: [1] }, "inputs.0"),
      ),
    ).toBe("400 inputs.0.data.0");
  });

  it("writes 64-bit integers as JSON numbers", () => {
    expect(
      toJsonTensor("y", { datatype: "INT64", shape: [2], data: new BigInt64Array([7n, -1n]) }).data,
    ).toEqual([7, -1]);
  });
});
