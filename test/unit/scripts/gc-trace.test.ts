// scripts/lib/gc-trace.mjs reads V8's --trace-gc lines as workerd prints them: the Worker's
// isolate is the one that keeps the most; fullPauses picks that isolate's full collections out of
// a slice of lines (bench:fraud's cells). The Mark-Compact lines are workerd 2026-11-17's output.
import { describe, expect, it } from "vitest";
import { fullPauses, gcSummary } from "../../../scripts/lib/gc-trace.mjs";

const worker = "0x7320bfca6000";
const entry = "0x7320bf9e8000";
const lines = [
  `[8699:${entry}]      812 ms: Scavenge 1.9 (3.0) -> 1.2 (3.0) MB, pooled: 0.0 MB, 0.41 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;`,
  `[8699:${worker}]     7843 ms: Mark-Compact 34.1 (48.8) -> 13.5 (48.0) MB, pooled: 0.8 MB, 34.27 / 0.00 ms (average mu = 0.996, current mu = 0.996) allocation failure; GC in old space requested`,
  `[8699:${worker}]     9021 ms: Scavenge 17.2 (48.0) -> 15.9 (48.0) MB, pooled: 0.0 MB, 1.32 / 0.00 ms  (average mu = 0.996, current mu = 0.996) allocation failure;`,
  `[8699:${entry}]    11002 ms: Mark-Compact 2.1 (3.5) -> 1.1 (3.5) MB, pooled: 0.0 MB, 2.10 / 0.00 ms (average mu = 0.999, current mu = 0.999) low memory notification; GC in old space requested`,
  `[8699:${worker}]    13975 ms: Mark-Compact 36.4 (51.5) -> 13.7 (50.5) MB, pooled: 1.0 MB, 42.28 / 0.00 ms (average mu = 0.995, current mu = 0.993) allocation failure; GC in old space requested`,
  "some other line workerd printed",
];

describe("gc-trace", () => {
  it("finds the Worker's isolate and its collections", () => {
    const summary = gcSummary(lines);
    expect(summary.isolate).toBe(worker);
    expect(summary.full.map(({ ms }) => ms)).toEqual([34.27, 42.28]);
    expect(summary.young).toEqual([1.32]);
  });

  it("lists one isolate's full collections in a slice of the lines", () => {
    expect(fullPauses(lines, worker)).toEqual([34.27, 42.28]);
    expect(fullPauses(lines.slice(2, 4), worker)).toEqual([]);
    expect(fullPauses(lines.slice(3), worker)).toEqual([42.28]);
    expect(fullPauses(lines, entry)).toEqual([2.1]);
    expect(fullPauses(lines, undefined)).toEqual([]);
  });
});
