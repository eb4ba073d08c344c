// A pushdown automaton over bytes for the values a Shape admits, stepped one byte at a time without
// copying its stacks.
import type { Frame, Stack } from "./json-frames";
import { keyByte, keyCandidates, mayClose } from "./json-keys";
import { numberEnds, numberNext, numberStart } from "./json-number";
import { literalByte, stringByte } from "./json-scalars";
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  NONE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  push,
  QUOTE,
  sameStack,
  STRING,
  valueDone,
} from "./json-stack";
import type { Shape } from "./shapes";

export type { Stack } from "./json-frames";

/**
 * The state before a value of `shape`, its first byte not yet read.
 *
 * A state is a set of stacks (a union may go several ways until a byte decides); stacks are
 * immutable linked frames, so trying a byte never copies one and a token's bytes can be tried from
 * the same state for every token of the vocabulary.
 */
export function start(shape: Shape): readonly Stack[] {
  // A regex may match the empty output: its start state is already a state that may end.
  if (shape.kind === "regex") return [push({ t: "regex", dfa: shape.dfa, state: 0 }, undefined)];
  return [push({ t: "pending", shape }, undefined)];
}

/**
 * The most ways a value of `shape` stands open after its first byte (a union's options that
 * all take it): what the token matcher refuses past SCHEMA_LIMITS.openWays, found here when the
 * format is compiled, before any token is generated.
 */
export function openWaysAtStart(shape: Shape): number {
  const [pending] = start(shape);
  let widest = 0;
  for (let byte = 0; byte < 256; byte += 1) widest = Math.max(widest, step(pending!, byte).length);
  return widest;
}

/** The stacks after one byte (none: the byte is not allowed). */
export function step(stack: Stack, byte: number): readonly Stack[] {
  const frame = stack.frame;
  switch (frame.t) {
    case "pending":
      return valueStart(frame.shape, stack.parent, byte);
    case "end":
      return NONE;
    case "string":
      // The hot path (most of a vocabulary inside a string): a plain ASCII character of an
      // unbounded string leaves the state as it is, so the same stack comes back, unallocated.
      if (
        frame.max === Infinity &&
        frame.min === 0 &&
        frame.dfa === undefined &&
        !frame.escape &&
        frame.hex === 0 &&
        frame.cont === 0 &&
        byte >= 0x20 &&
        byte < 0x80 &&
        byte !== QUOTE &&
        byte !== BACKSLASH
      ) {
        return sameStack(stack);
      }
      return stringByte(frame, stack.parent, byte);
    case "number":
      return numberByte(frame, stack.parent, byte);
    case "literal":
      return literalByte(frame, stack.parent, byte);
    case "regex": {
      const next = frame.dfa.next(frame.state, byte);
      return next < 0 || !frame.dfa.fits(next)
        ? NONE
        : [push({ t: "regex", dfa: frame.dfa, state: next }, undefined)];
    }
    case "key":
      return keyByte(frame, stack.parent, byte);
    case "object":
      return objectByte(frame, stack.parent, byte);
    case "free-object":
      return freeObjectByte(frame, stack.parent, byte);
    case "array":
      return arrayByte(frame, stack.parent, byte);
  }
}

/** Whether the value may end here (the output is complete). */
export function canEnd(stack: Stack): boolean {
  const frame = stack.frame;
  if (frame.t === "end") return true;
  if (frame.t === "regex") return frame.dfa.accepting[frame.state] === 1;
  if (frame.t === "number" && numberEnds(frame)) return valueDone(stack.parent).some(canEnd);
  return false;
}

/**
 * How many refs and unions a value's first byte may pass through (a ref to itself alone never
 * ends).
 */
const MAX_INDIRECTION = 64;

/** A value of `shape` starting with `byte`, under `parent`. */
function valueStart(
  shape: Shape,
  parent: Stack | undefined,
  byte: number,
  indirection = 0,
): readonly Stack[] {
  if (indirection > MAX_INDIRECTION) return NONE;
  switch (shape.kind) {
    case "ref":
      return valueStart(shape.resolve(), parent, byte, indirection + 1);
    case "union":
      return shape.options.flatMap((option) => valueStart(option, parent, byte, indirection + 1));
    case "object":
      return byte === OPEN_OBJECT
        ? [
            push(
              { t: "object", properties: shape.properties, phase: "open", next: 0, prop: -1 },
              parent,
            ),
          ]
        : NONE;
    case "free-object":
      return byte === OPEN_OBJECT
        ? [push({ t: "free-object", values: shape.values, phase: "open" }, parent)]
        : NONE;
    case "array":
      return byte === OPEN_ARRAY
        ? [
            push(
              {
                t: "array",
                items: shape.items,
                minItems: shape.minItems,
                maxItems: shape.maxItems,
                count: 0,
                phase: "open",
              },
              parent,
            ),
          ]
        : NONE;
    case "string":
      return byte === QUOTE
        ? [
            push(
              { ...STRING, min: shape.minLength, max: shape.maxLength, dfa: shape.pattern },
              parent,
            ),
          ]
        : NONE;
    case "number":
      return numberByte({ t: "number", ...numberStart(shape.integer, shape.range) }, parent, byte);
    case "literal":
      return literalByte({ t: "literal", values: shape.values, pos: 0 }, parent, byte);
    case "regex":
      // Only the top-level shape (start() enters it); never a value inside another.
      return NONE;
  }
}

function numberByte(
  frame: Extract<Frame, { t: "number" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  const next = numberNext(frame, byte);
  if (next !== undefined)
    return next === "refused" ? NONE : [push({ t: "number", ...next }, parent)];
  // A number ends at the first byte that cannot continue it; that byte belongs to the parent.
  if (!numberEnds(frame)) return NONE;
  return valueDone(parent).flatMap((done) => step(done, byte));
}

function objectByte(
  frame: Extract<Frame, { t: "object" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  const self = (next: Partial<Extract<Frame, { t: "object" }>>) =>
    push({ ...frame, ...next }, parent);
  switch (frame.phase) {
    case "open":
    case "comma": {
      if (frame.phase === "open" && byte === CLOSE_OBJECT)
        return mayClose(frame.properties, frame.next) ? valueDone(parent) : NONE;
      const candidates = keyCandidates(frame.properties, frame.next);
      if (candidates.length === 0) return NONE;
      return keyByte({ t: "key", candidates, pos: 0 }, self({ phase: "colon" }), byte);
    }
    case "colon":
      return byte === COLON ? [self({ phase: "value" })] : NONE;
    case "value":
      return valueStart(frame.properties[frame.prop]!.shape, self({}), byte);
    case "after":
      if (byte === CLOSE_OBJECT)
        return mayClose(frame.properties, frame.next) ? valueDone(parent) : NONE;
      return byte === COMMA && keyCandidates(frame.properties, frame.next).length > 0
        ? [self({ phase: "comma" })]
        : NONE;
  }
}

function freeObjectByte(
  frame: Extract<Frame, { t: "free-object" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  const self = (phase: Extract<Frame, { t: "free-object" }>["phase"]) =>
    push({ ...frame, phase }, parent);
  switch (frame.phase) {
    case "open":
    case "comma":
      if (frame.phase === "open" && byte === CLOSE_OBJECT) return valueDone(parent);
      return byte === QUOTE ? [push(STRING, self("key"))] : NONE;
    case "key":
      return NONE; // the key's string frame sits above this one until its closing quote
    case "colon":
      return byte === COLON ? [self("value")] : NONE;
    case "value":
      return valueStart(frame.values, self("value"), byte);
    case "after":
      if (byte === CLOSE_OBJECT) return valueDone(parent);
      return byte === COMMA ? [self("comma")] : NONE;
  }
}

function arrayByte(
  frame: Extract<Frame, { t: "array" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  const self = (next: Partial<Extract<Frame, { t: "array" }>>) =>
    push({ ...frame, ...next }, parent);
  switch (frame.phase) {
    case "open":
      if (byte === CLOSE_ARRAY) return frame.minItems <= 0 ? valueDone(parent) : NONE;
      return frame.maxItems > 0 ? valueStart(frame.items, self({ phase: "item" }), byte) : NONE;
    case "comma":
      return valueStart(frame.items, self({ phase: "item" }), byte);
    case "item":
      return NONE;
    case "after":
      if (byte === CLOSE_ARRAY) return frame.count >= frame.minItems ? valueDone(parent) : NONE;
      return byte === COMMA && frame.count < frame.maxItems ? [self({ phase: "comma" })] : NONE;
  }
}
