// The JSON automaton's state (json-bytes.ts steps it): a stack of frames, one per value being
// written, innermost on top; stacks are immutable and share their parents.
import type { NumberState } from "./json-number";
import type { ByteDfa } from "./regex";
import type { Property, Shape } from "./shapes";

export type Frame =
  /** Before a value's first byte (the byte decides which kind of value it is). */
  | { readonly t: "pending"; readonly shape: Shape }
  /** Declared object: `next` is the first property not yet passed; `prop` the one being written. */
  | {
      readonly t: "object";
      readonly properties: readonly Property[];
      readonly phase: "open" | "comma" | "colon" | "value" | "after";
      readonly next: number;
      readonly prop: number;
    }
  | {
      readonly t: "free-object";
      readonly values: Shape;
      readonly phase: "open" | "comma" | "key" | "colon" | "value" | "after";
    }
  | {
      readonly t: "array";
      readonly items: Shape;
      readonly minItems: number;
      readonly maxItems: number;
      readonly count: number;
      readonly phase: "open" | "comma" | "item" | "after";
    }
  /**
   * A key of a declared object, matched against the properties it may be (their serialized keys).
   */
  | { readonly t: "key"; readonly candidates: readonly number[]; readonly pos: number }
  /**
   * `hex`: hex digits left of a \u escape; `cont`: UTF-8 continuation bytes left, the next in
   * [lo, hi]; `chars`: characters so far (code points), held within [min, max]; `dfa`: the
   * schema's pattern, in `dstate` after the content's UTF-8 bytes so far.
   */
  | {
      readonly t: "string";
      readonly escape: boolean;
      readonly hex: number;
      readonly cont: number;
      readonly lo: number;
      readonly hi: number;
      readonly chars: number;
      readonly min: number;
      readonly max: number;
      readonly dfa: ByteDfa | undefined;
      readonly dstate: number;
    }
  | ({ readonly t: "number" } & NumberState)
  | { readonly t: "literal"; readonly values: readonly Uint8Array[]; readonly pos: number }
  /** A regex's DFA in `state` (the whole output: it has no parent). */
  | { readonly t: "regex"; readonly dfa: ByteDfa; readonly state: number }
  /** The whole value is written: nothing more may follow. */
  | { readonly t: "end" };

export interface Stack {
  readonly frame: Frame;
  readonly parent: Stack | undefined;
}
