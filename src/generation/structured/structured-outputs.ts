// Structured outputs as they cross from the edge to an engine: vLLM's `structured_outputs`
// (vllm/sampling_params.py StructuredOutputsParams, one constraint of: json, regex, choice,
// json_object), which both the vLLM adapter sends and the reference origin reads.
import { compileSchema } from "./json-schema";
import { ByteDfa } from "./regex";
import { choiceOf, JSON_OBJECT, type Shape } from "./shapes";

export type StructuredOutputs = { readonly json_object: true } | { readonly json: unknown } | { readonly choice: readonly string[] } | { readonly regex: string };

/** Compiled shapes by their spec's JSON, the most recent last: the same schema in the next request is the same shape, whose masks its vocabulary's trie has cached. */
const compiled = new Map<string, Shape>();
const MAX_COMPILED = 64;

/** The shape a constraint admits; a schema it cannot enforce throws SchemaError. */
export function shapeOf(spec: StructuredOutputs): Shape {
  if ("json_object" in spec) return JSON_OBJECT;
  const key = JSON.stringify(spec);
  let shape = compiled.get(key);
  if (shape === undefined) {
    shape =
      "choice" in spec
        ? choiceOf(spec.choice)
        : "regex" in spec
          ? { kind: "regex", dfa: ByteDfa.compile(spec.regex) }
          : compileSchema(typeof spec.json === "string" ? (JSON.parse(spec.json) as unknown) : spec.json);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  } else {
    compiled.delete(key);
  }
  compiled.set(key, shape);
  return shape;
}

export { SchemaError, SCHEMA_LIMITS } from "./json-schema";
export { TokenMatcher, VocabularyTrie } from "./token-matcher";
