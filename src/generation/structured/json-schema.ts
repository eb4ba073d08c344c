// JSON Schema → Shape, for the keywords whose every constraint the byte automaton can keep; a
// keyword it cannot enforce is refused, naming its place, never ignored.
import { openWaysAtStart } from "./json-bytes";
import { MAX_DFA_STATES } from "./regex";
import { numberShape, stringShape } from "./scalar-schemas";
import { SCHEMA_LIMITS, SchemaError } from "./schema-error";
import {
  ANNOTATIONS,
  count,
  isOfType,
  isRecord,
  KNOWN,
  pointer,
  TYPES,
  typesOf,
  type TypeName,
} from "./schema-keywords";
import { ANY_VALUE, jsonLiterals, property, type Shape } from "./shapes";

/**
 * Compiles a JSON Schema (the object under `response_format.json_schema.schema`).
 *
 * Output always validates against the schema: a keyword that would constrain what we cannot enforce
 * (multipleOf, format, …) is refused rather than ignored; annotations (title, description, …) are
 * ignored. Objects write their declared properties in the declared order (optional ones may be left
 * out), as OpenAI's strict mode does, which is a subset of what `additionalProperties` allows.
 * `oneOf` is read as `anyOf` (as xgrammar does).
 */
export function compileSchema(schema: unknown): Shape {
  const root = schema;
  const refs = new Map<string, Shape>();
  /** The DFA states the schema's patterns may make together. */
  const dfaBudget = { left: MAX_DFA_STATES };

  /**
   * A definition compiles one level below the $ref that first reaches it: a chain of refs counts
   * toward the depth limit.
   */
  const resolveRef = (ref: string, path: string, depth: number): Shape => {
    const known = refs.get(ref);
    if (known !== undefined) return known;
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
    const defs = match && isRecord(root) ? root[match[1]!] : undefined;
    const name = match?.[2]?.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isRecord(defs) || name === undefined || !(name in defs))
      throw new SchemaError(
        path,
        `$ref ${JSON.stringify(ref)} is not a local #/$defs/… or #/definitions/… entry of this ` +
          "schema",
      );
    // Compiled on first use, so that a definition may refer to itself.
    let compiled: Shape | undefined;
    const shape: Shape = {
      kind: "ref",
      resolve: () => {
        if (compiled === undefined)
          throw new SchemaError(path, `$ref ${JSON.stringify(ref)} read before it was compiled`);
        return compiled;
      },
    };
    refs.set(ref, shape);
    compiled = compile(defs[name], `/${match![1]}/${match![2]}`, depth + 1);
    return shape;
  };

  const compile = (node: unknown, path: string, depth: number): Shape => {
    if (depth > SCHEMA_LIMITS.depth)
      throw new SchemaError(path, `nests deeper than ${SCHEMA_LIMITS.depth} levels`);
    if (node === true) return ANY_VALUE;
    if (!isRecord(node))
      throw new SchemaError(
        path,
        node === false
          ? "a false schema admits no value"
          : "a schema must be an object or a boolean",
      );
    for (const key of Object.keys(node)) {
      if (!KNOWN.has(key))
        throw new SchemaError(
          pointer(path, key),
          `the keyword ${JSON.stringify(key)} is not supported in structured outputs`,
        );
    }
    if (node.$ref !== undefined) {
      if (typeof node.$ref !== "string")
        throw new SchemaError(pointer(path, "$ref"), "$ref must be a string");
      const others = Object.keys(node).filter((key) => key !== "$ref" && !ANNOTATIONS.has(key));
      if (others.length > 0)
        throw new SchemaError(
          pointer(path, others[0]!),
          "a $ref takes no other constraint beside it",
        );
      return resolveRef(node.$ref, pointer(path, "$ref"), depth);
    }
    const nullable = node.nullable === true ? [jsonLiterals([null])] : [];
    const alternatives = (key: "anyOf" | "oneOf" | "allOf"): unknown[] | undefined => {
      const value = node[key];
      if (value === undefined) return undefined;
      if (!Array.isArray(value) || value.length === 0)
        throw new SchemaError(pointer(path, key), `${key} must be a non-empty array`);
      return value;
    };
    const anyOf = alternatives("anyOf") ?? alternatives("oneOf");
    const allOf = alternatives("allOf");
    if (anyOf !== undefined || allOf !== undefined) {
      const own = Object.keys(node).filter(
        (key) =>
          !ANNOTATIONS.has(key) &&
          key !== "anyOf" &&
          key !== "oneOf" &&
          key !== "allOf" &&
          key !== "nullable",
      );
      if (own.length > 0)
        throw new SchemaError(
          pointer(path, own[0]!),
          "constraints beside anyOf/oneOf/allOf are not supported; move them into each alternative",
        );
      if (allOf !== undefined) {
        if (allOf.length > 1 || anyOf !== undefined)
          throw new SchemaError(pointer(path, "allOf"), "allOf is supported with one schema only");
        return union([
          compile(allOf[0], pointer(pointer(path, "allOf"), 0), depth + 1),
          ...nullable,
        ]);
      }
      const key = node.anyOf !== undefined ? "anyOf" : "oneOf";
      const shape = union([
        ...anyOf!.map((option, index) =>
          compile(option, pointer(pointer(path, key), index), depth + 1),
        ),
        ...nullable,
      ]);
      refuseTooWide(shape, pointer(path, key));
      return shape;
    }

    const types = typesOf(node.type, pointer(path, "type"));
    if (node.enum !== undefined || node.const !== undefined) {
      const key = node.enum !== undefined ? "enum" : "const";
      const values = key === "enum" ? node.enum : [node.const];
      if (!Array.isArray(values) || values.length === 0 || values.length > SCHEMA_LIMITS.enumValues)
        throw new SchemaError(
          pointer(path, key),
          `enum must list 1–${SCHEMA_LIMITS.enumValues} values`,
        );
      const kept =
        types === undefined
          ? values
          : values.filter((value) => types.some((type) => isOfType(value, type)));
      if (kept.length === 0)
        throw new SchemaError(pointer(path, key), `no value of ${key} is of the schema's type`);
      return union([jsonLiterals(kept), ...nullable]);
    }
    return union([
      ...(types ?? TYPES.filter((type) => type !== "integer")).map((type) =>
        typed(node, type, path, depth),
      ),
      ...nullable,
    ]);
  };

  const typed = (
    node: Record<string, unknown>,
    type: TypeName,
    path: string,
    depth: number,
  ): Shape => {
    switch (type) {
      case "null":
        return jsonLiterals([null]);
      case "boolean":
        return jsonLiterals([true, false]);
      case "string":
        return stringShape(node, path, dfaBudget);
      case "number":
      case "integer":
        return numberShape(node, type, path);
      case "array": {
        const minItems = count(node.minItems, pointer(path, "minItems"), 0);
        const maxItems = count(node.maxItems, pointer(path, "maxItems"), Infinity);
        if (minItems > maxItems)
          throw new SchemaError(pointer(path, "minItems"), "minItems is above maxItems");
        if (Array.isArray(node.items))
          throw new SchemaError(
            pointer(path, "items"),
            "items as an array (tuple validation) is not supported",
          );
        const items =
          node.items === undefined
            ? ANY_VALUE
            : compile(node.items, pointer(path, "items"), depth + 1);
        return { kind: "array", items, minItems, maxItems };
      }
      case "object":
        return objectShape(node, path, depth);
    }
  };

  const objectShape = (node: Record<string, unknown>, path: string, depth: number): Shape => {
    const { properties, required = [], additionalProperties } = node;
    if (properties !== undefined && !isRecord(properties))
      throw new SchemaError(pointer(path, "properties"), "properties must be an object");
    if (!Array.isArray(required) || required.some((name) => typeof name !== "string"))
      throw new SchemaError(
        pointer(path, "required"),
        "required must be an array of property names",
      );
    const declared = Object.entries(properties ?? {});
    if (declared.length > SCHEMA_LIMITS.properties)
      throw new SchemaError(
        pointer(path, "properties"),
        `more than ${SCHEMA_LIMITS.properties} properties`,
      );
    const missing = required.find((name) => !declared.some(([key]) => key === name));
    if (properties === undefined && required.length === 0 && additionalProperties !== false) {
      // No declared properties: any keys, each value of additionalProperties' schema.
      const values =
        additionalProperties === undefined || additionalProperties === true
          ? ANY_VALUE
          : compile(additionalProperties, pointer(path, "additionalProperties"), depth + 1);
      return { kind: "free-object", values };
    }
    if (missing !== undefined)
      throw new SchemaError(
        pointer(path, "required"),
        `required property ${JSON.stringify(missing)} is not among the declared properties`,
      );
    if (
      additionalProperties !== undefined &&
      typeof additionalProperties !== "boolean" &&
      !isRecord(additionalProperties)
    )
      throw new SchemaError(
        pointer(path, "additionalProperties"),
        "additionalProperties must be a boolean or a schema",
      );
    const props = declared.map(([name, schema]) =>
      property(
        name,
        compile(schema, pointer(pointer(path, "properties"), name), depth + 1),
        required.includes(name),
      ),
    );
    return { kind: "object", properties: props };
  };

  return compile(schema, "", 0);
}

/**
 * A union whose options start alike beyond SCHEMA_LIMITS.openWays (500 string consts) would be
 * refused by the token matcher at its first byte, mid-generation; it is refused here instead.
 */
function refuseTooWide(shape: Shape, path: string): void {
  const leaves = (of: Shape): number =>
    of.kind === "union" ? of.options.reduce((total, option) => total + leaves(option), 0) : 1;
  if (leaves(shape) <= SCHEMA_LIMITS.openWays) return;
  let ways: number;
  try {
    ways = openWaysAtStart(shape);
  } catch {
    return; // a $ref not compiled yet: the matcher still guards it
  }
  if (ways > SCHEMA_LIMITS.openWays)
    throw new SchemaError(
      path,
      `${ways} alternatives start alike and would stand open at once, over the limit of ` +
        `${SCHEMA_LIMITS.openWays} (list such values in one enum instead)`,
    );
}

function union(options: Shape[]): Shape {
  return options.length === 1 ? options[0]! : { kind: "union", options };
}
