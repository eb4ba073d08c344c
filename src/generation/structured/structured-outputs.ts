// Structured outputs as they cross from the edge to an engine: vLLM's `structured_outputs` (one of
// json, regex, choice, json_object), sent by the vLLM adapter and read by the reference origin.
import { memoMap } from "../../memos";
import { compileSchema } from "./json-schema";
import { ByteDfa } from "./regex";
import { choiceOf, JSON_OBJECT, type Shape } from "./shapes";

export type StructuredOutputs =
  | { readonly json_object: true }
  | { readonly json: unknown }
  | { readonly choice: readonly string[] }
  | { readonly regex: string };

/**
 * Compiled shapes by their spec's JSON, the most recent last: the same schema in the next request
 * is the same shape, whose masks its vocabulary's trie has cached.
 */
const compiled = memoMap<string, { shape: Shape; bytes: number }>("structured.shapes");
const MAX_COMPILED = 64;
/** The most bytes of regex DFAs the cache keeps (a constraint's own are at most 512 KiB). */
const MAX_COMPILED_DFA_BYTES = 4 * 1024 * 1024;
const heldDfaBytes = () => [...compiled.values()].reduce((sum, held) => sum + held.bytes, 0);

/** The bytes of the DFAs a shape holds (its regex, its strings' patterns), each counted once. */
function dfaBytes(shape: Shape, seen = new Set<Shape>()): number {
  if (seen.has(shape)) return 0;
  seen.add(shape);
  switch (shape.kind) {
    case "regex":
      return shape.dfa.bytes;
    case "string":
      return shape.pattern?.bytes ?? 0;
    case "object":
      return shape.properties.reduce((sum, property) => sum + dfaBytes(property.shape, seen), 0);
    case "free-object":
      return dfaBytes(shape.values, seen);
    case "array":
      return dfaBytes(shape.items, seen);
    case "union":
      return shape.options.reduce((sum, option) => sum + dfaBytes(option, seen), 0);
    case "ref":
      return dfaBytes(shape.resolve(), seen);
    default:
      return 0;
  }
}

/** The shape a constraint admits; a schema it cannot enforce throws SchemaError. */
export function shapeOf(spec: StructuredOutputs): Shape {
  if ("json_object" in spec) return JSON_OBJECT;
  const key = JSON.stringify(spec);
  let entry = compiled.get(key);
  if (entry === undefined) {
    const shape: Shape =
      "choice" in spec
        ? choiceOf(spec.choice)
        : "regex" in spec
          ? { kind: "regex", dfa: ByteDfa.compile(spec.regex) }
          : compileSchema(
              typeof spec.json === "string" ? (JSON.parse(spec.json) as unknown) : spec.json,
            );
    entry = { shape, bytes: dfaBytes(shape) };
    // The least recently used go first, until both the count and the DFAs' bytes fit.
    while (
      compiled.size > 0 &&
      (compiled.size >= MAX_COMPILED || heldDfaBytes() + entry.bytes > MAX_COMPILED_DFA_BYTES)
    ) {
      compiled.delete(compiled.keys().next().value!);
    }
  } else {
    compiled.delete(key);
  }
  compiled.set(key, entry);
  return entry.shape;
}

export { SchemaError, SCHEMA_LIMITS } from "./schema-error";
export { TokenMatcher, VocabularyTrie } from "./token-matcher";
