// The JSON Schema keywords structured outputs read, and the checks of their plain values: the
// types a schema names, counts, and JSON pointers to a keyword.
import { SchemaError } from "./schema-error";

export const ANNOTATIONS = new Set([
  "title",
  "description",
  "default",
  "examples",
  "$schema",
  "$id",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$defs",
  "definitions",
  "strict",
]);
export const KNOWN = new Set([
  ...ANNOTATIONS,
  "type",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "nullable",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
]);
export const TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
export type TypeName = (typeof TYPES)[number];

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const pointer = (path: string, key: string | number) =>
  `${path}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

/** Whether a JSON value is of a JSON Schema type (integer: a number with no fraction). */
export function isOfType(value: unknown, type: TypeName): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "boolean":
      return typeof value === "boolean";
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "integer":
      return Number.isInteger(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return isRecord(value);
  }
}

export function typesOf(type: unknown, path: string): TypeName[] | undefined {
  if (type === undefined) return undefined;
  const list = Array.isArray(type) ? type : [type];
  if (list.length === 0) throw new SchemaError(path, "type must name at least one type");
  for (const name of list)
    if (!TYPES.includes(name as TypeName))
      throw new SchemaError(path, `unknown type ${JSON.stringify(name)}`);
  // integer is a subset of number: where both are listed, number covers it.
  const names = list as TypeName[];
  return names.includes("number") ? names.filter((name) => name !== "integer") : names;
}

export function count(value: unknown, path: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw new SchemaError(path, "must be a non-negative integer");
  return value;
}
