// Structured outputs as they cross from the edge to an engine: vLLM's `structured_outputs`
// (vllm/sampling_params.py StructuredOutputsParams, one constraint of: json, choice,
// json_object), which both the vLLM adapter sends and the reference origin reads.
import { compileSchema } from "./json-schema";
import { choiceOf, JSON_OBJECT, type Shape } from "./shapes";

export type StructuredOutputs = { readonly json_object: true } | { readonly json: unknown } | { readonly choice: readonly string[] };

/** The shape a constraint admits; a schema it cannot enforce throws SchemaError. */
export function shapeOf(spec: StructuredOutputs): Shape {
  if ("json_object" in spec) return JSON_OBJECT;
  if ("choice" in spec) return choiceOf(spec.choice);
  return compileSchema(typeof spec.json === "string" ? (JSON.parse(spec.json) as unknown) : spec.json);
}

export { SchemaError, SCHEMA_LIMITS } from "./json-schema";
export { TokenMatcher, VocabularyTrie } from "./token-matcher";
