// integerList (src/routes/http/integer-list.ts) checks a list of integers by hand after one
// z.array(z.number()) pass: its issues must be the ones the per-element schema gives.
import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { integerList } from "../../../../src/routes/http/integer-list";

const issues = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value);
  return result.success ? "ok" : result.error.issues.map((issue) => [issue.path, issue.message]);
};

describe("integerList", () => {
  const cases: unknown[] = [
    [0, 1, 255],
    [],
    [1, 2.5],
    [1, -1],
    [300],
    ["a"],
    [1, null],
    [3, 1e300],
    [-1e300, 2 ** 53, -1.5],
    [1, 10, -1, 256],
    "bytes",
    { 0: 1 },
    [Number.NaN],
  ];
  it.each(cases.map((value) => [JSON.stringify(value), value]))(
    "%s: the same issues as z.array(z.number().int().min(0).max(255))",
    (_, value) => {
      expect(issues(integerList(0, 255), value)).toEqual(
        issues(z.array(z.number().int().min(0).max(255)), value),
      );
    },
  );

  it("without an upper bound, as z.array(z.number().int().min(0))", () => {
    for (const value of [[0, 2 ** 40], [-3], [0.5], [1e300], [-1e300, 4, -(2 ** 53)]])
      expect(issues(integerList(0, Infinity), value)).toEqual(
        issues(z.array(z.number().int().min(0)), value),
      );
  });
});
