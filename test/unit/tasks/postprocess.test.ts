import { describe, expect, it } from "vitest";
import { rows, softmax, topK } from "../../../src/tasks/postprocess";

describe("softmax", () => {
  it("sums to one and keeps order", () => {
    const probabilities = softmax([1, 2, 3]);
    expect(probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(probabilities[2]).toBeGreaterThan(probabilities[1]!);
    expect(probabilities[0]).toBeCloseTo(
      Math.exp(1) / (Math.exp(1) + Math.exp(2) + Math.exp(3)),
      12,
    );
  });

  it("is stable for large logits", () => {
    expect(softmax([1000, 1000])).toEqual([0.5, 0.5]);
    expect(softmax([-1e4, 0])[1]).toBeCloseTo(1, 12);
  });
});

describe("topK", () => {
  it("ranks labels best first and cuts at k", () => {
    expect(topK([0.2, 0.7, 0.1], ["a", "b", "c"], 2)).toEqual([
      { label: "b", score: 0.7 },
      { label: "a", score: 0.2 },
    ]);
  });
});

describe("rows", () => {
  it("splits a row-major buffer", () => {
    expect(rows(new Float32Array([1, 2, 3, 4]), 2)).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });
});
