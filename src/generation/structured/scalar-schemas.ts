// A string or number schema as a Shape: lengths and a pattern compiled to a byte DFA; bounds as
// a range the number automaton can keep.
import { hasWholeNumber, numberRange } from "./number-range";
import { ByteDfa } from "./regex";
import { searchPattern } from "./search-pattern";
import { SchemaError } from "./schema-error";
import { count, pointer } from "./schema-keywords";
import type { Shape } from "./shapes";

/** A string schema: minLength, maxLength, and a pattern (its DFA states taken from `dfaBudget`). */
export function stringShape(
  node: Record<string, unknown>,
  path: string,
  dfaBudget: { left: number },
): Shape {
  const minLength = count(node.minLength, pointer(path, "minLength"), 0);
  const maxLength = count(node.maxLength, pointer(path, "maxLength"), Infinity);
  if (minLength > maxLength)
    throw new SchemaError(pointer(path, "minLength"), "minLength is above maxLength");
  if (node.pattern === undefined) return { kind: "string", minLength, maxLength };
  const at = pointer(path, "pattern");
  if (typeof node.pattern !== "string") throw new SchemaError(at, "pattern must be a string");
  try {
    const { source, offset } = searchPattern(node.pattern);
    const pattern = ByteDfa.compile(source, offset, dfaBudget);
    if (!pattern.fits(0, minLength, maxLength)) {
      const lengths =
        maxLength === Infinity ? `${minLength} or more` : `${minLength} to ${maxLength}`;
      throw new SchemaError(at, `no string of ${lengths} characters matches the pattern`);
    }
    return { kind: "string", minLength, maxLength, pattern };
  } catch (error) {
    if (error instanceof SchemaError) throw new SchemaError(at, error.message);
    throw error;
  }
}

/** A number or integer schema: its bounds as a range holding a whole number. */
export function numberShape(
  node: Record<string, unknown>,
  type: "number" | "integer",
  path: string,
): Shape {
  const bounds: Record<string, number> = {};
  for (const key of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const) {
    const value = node[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value))
      throw new SchemaError(pointer(path, key), `${key} must be a number`);
    bounds[key] = value;
  }
  const range = numberRange(bounds);
  if (range !== undefined && !hasWholeNumber(range)) {
    throw new SchemaError(
      pointer(path, "minimum" in bounds ? "minimum" : "exclusiveMinimum"),
      "the range holds no whole number: a bounded number is written as a whole number, or a " +
        "whole part whose every fraction stays in the range",
    );
  }
  return {
    kind: "number",
    integer: type === "integer",
    ...(range === undefined ? {} : { range }),
  };
}
