// What a structured output may look like, as the byte automaton (json-bytes.ts) reads it: the JSON
// values a schema admits, or a choice among literal texts.

import type { NumberRange } from "./number-range";
import type { ByteDfa } from "./regex";

const utf8 = new TextEncoder();

/** A property of a declared object: its key as serialized JSON (quotes included). */
export interface Property {
  readonly name: string;
  readonly key: Uint8Array;
  readonly shape: Shape;
  readonly required: boolean;
}

/**
 * Compact JSON: no whitespace outside strings, as vLLM's `disable_any_whitespace` (a model cannot
 * loop on spaces between tokens).
 */
export type Shape =
  /**
   * An object of declared properties, written in the declared order (optional ones may be left
   * out).
   */
  | { readonly kind: "object"; readonly properties: readonly Property[] }
  /** An object with any keys, each value of `values`. */
  | { readonly kind: "free-object"; readonly values: Shape }
  | {
      readonly kind: "array";
      readonly items: Shape;
      readonly minItems: number;
      readonly maxItems: number;
    }
  /**
   * A string of minLength to maxLength characters (code points), its content matched whole by
   * `pattern` where set.
   */
  | {
      readonly kind: "string";
      readonly minLength: number;
      readonly maxLength: number;
      readonly pattern?: ByteDfa;
    }
  /** A number (an integer: no fraction, no exponent), within `range` where one is set. */
  | { readonly kind: "number"; readonly integer: boolean; readonly range?: NumberRange }
  /**
   * One of these byte strings exactly (serialized JSON values for enum/const/booleans/null, or raw
   * texts for a choice).
   */
  | { readonly kind: "literal"; readonly values: readonly Uint8Array[] }
  | { readonly kind: "union"; readonly options: readonly Shape[] }
  /** A `$ref`, resolved when first read (a schema may refer to itself). */
  | { readonly kind: "ref"; readonly resolve: () => Shape }
  /**
   * vLLM's `regex`: the whole output, as a byte DFA reads it (regex.ts). Only ever the top-level
   * shape.
   */
  | { readonly kind: "regex"; readonly dfa: ByteDfa };

/** The literal shape of these JSON values, each serialized compactly. */
export function jsonLiterals(values: readonly unknown[]): Shape {
  return { kind: "literal", values: values.map((value) => utf8.encode(JSON.stringify(value))) };
}

/** Any string. */
export const STRING: Shape = { kind: "string", minLength: 0, maxLength: Infinity };

/** Any JSON value (what a `true` schema admits, and the values of a json_object). */
export const ANY_VALUE: Shape = {
  kind: "ref",
  resolve: () => ANY,
};

const ANY: Shape = {
  kind: "union",
  options: [
    { kind: "free-object", values: ANY_VALUE },
    { kind: "array", items: ANY_VALUE, minItems: 0, maxItems: Infinity },
    STRING,
    { kind: "number", integer: false },
    jsonLiterals([true, false, null]),
  ],
};

/** OpenAI's JSON mode (`response_format: {"type": "json_object"}`): an object, anything in it. */
export const JSON_OBJECT: Shape = { kind: "free-object", values: ANY_VALUE };

/** vLLM's `choice`: exactly one of these texts, nothing around it. */
export function choiceOf(choices: readonly string[]): Shape {
  return { kind: "literal", values: choices.map((choice) => utf8.encode(choice)) };
}

/** A declared property, its key serialized as JSON. */
export function property(name: string, shape: Shape, required: boolean): Property {
  return { name, key: utf8.encode(JSON.stringify(name)), shape, required };
}
