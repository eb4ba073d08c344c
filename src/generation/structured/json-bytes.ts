// A pushdown automaton over bytes for the values a Shape admits, stepped one byte at a time without
// copying its stacks.
import type { Frame, Stack } from "./json-frames";
import { numberEnds, numberNext, numberStart } from "./json-number";
import type { Property, Shape } from "./shapes";

export type { Stack } from "./json-frames";

const END: Stack = { frame: { t: "end" }, parent: undefined };
const NONE: readonly Stack[] = [];

const [QUOTE, BACKSLASH, COLON, COMMA] = [0x22, 0x5c, 0x3a, 0x2c];
const [OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY] = [0x7b, 0x7d, 0x5b, 0x5d];
const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
const isHex = (byte: number) =>
  isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);

const push = (frame: Frame, parent: Stack | undefined): Stack => ({ frame, parent });
const STRING: Extract<Frame, { t: "string" }> = {
  t: "string",
  escape: false,
  hex: 0,
  cont: 0,
  lo: 0,
  hi: 0,
  chars: 0,
  min: 0,
  max: Infinity,
  dfa: undefined,
  dstate: 0,
};
/**
 * JSON's short escapes: the byte after the backslash → the character it stands for (its byte in the
 * string's content).
 */
const ESCAPED = new Map(
  [...'"\\/bfnrt'].map((c, i) => [
    c.charCodeAt(0),
    [0x22, 0x5c, 0x2f, 0x08, 0x0c, 0x0a, 0x0d, 0x09][i]!,
  ]),
);
const ESCAPED_CONTENT = [...ESCAPED.values()];

const selves = new WeakMap<Stack, readonly Stack[]>();
/** A stack as its own successor, one array per stack. */
function sameStack(stack: Stack): readonly Stack[] {
  let self = selves.get(stack);
  if (self === undefined) selves.set(stack, (self = [stack]));
  return self;
}

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

/** The parent once its child value is complete (END at the top). */
function valueDone(parent: Stack | undefined): readonly Stack[] {
  if (parent === undefined) return [END];
  const frame = parent.frame;
  switch (frame.t) {
    case "object":
      return [
        push({ ...frame, phase: frame.phase === "value" ? "after" : "colon" }, parent.parent),
      ];
    case "free-object":
      return [
        push({ ...frame, phase: frame.phase === "value" ? "after" : "colon" }, parent.parent),
      ];
    case "array":
      return [push({ ...frame, count: frame.count + 1, phase: "after" }, parent.parent)];
    default:
      return NONE;
  }
}

function stringByte(
  frame: Extract<Frame, { t: "string" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  /**
   * The next state; `content`: the byte of the string's content this byte writes, which the pattern
   * (if any) must take.
   */
  const stack = (next: Partial<Extract<Frame, { t: "string" }>>, content?: number) => {
    if (frame.dfa === undefined || content === undefined)
      return [push({ ...frame, ...next }, parent)];
    const dstate = frame.dfa.next(frame.dstate, content);
    const chars = next.chars ?? frame.chars;
    // Only where the pattern can still match within the length left: a bounded string never strands
    // the walk.
    return dstate < 0 || !frame.dfa.fits(dstate, frame.min - chars, frame.max - chars)
      ? NONE
      : [push({ ...frame, ...next, dstate }, parent)];
  };
  const plain = { escape: false, hex: 0, cont: 0 };
  if (frame.cont > 0) {
    if (byte < frame.lo || byte > frame.hi) return NONE;
    return stack(frame.cont === 1 ? plain : { cont: frame.cont - 1, lo: 0x80, hi: 0xbf }, byte);
  }
  if (frame.hex > 0)
    return isHex(byte) ? stack(frame.hex === 1 ? plain : { hex: frame.hex - 1 }) : NONE;
  if (frame.escape) {
    // A \u escape may be half a surrogate pair (one code point in two escapes): where the length
    // is bounded it would be miscounted, and a pattern would see it late, so there only the short
    // escapes and raw UTF-8 are taken.
    if (byte === 0x75)
      return frame.min > 0 || frame.max < Infinity || frame.dfa !== undefined
        ? NONE
        : stack({ escape: false, hex: 4 });
    const content = ESCAPED.get(byte);
    return content === undefined ? NONE : stack(plain, content);
  }
  if (byte === QUOTE)
    return frame.chars >= frame.min &&
      (frame.dfa === undefined || frame.dfa.accepting[frame.dstate] === 1)
      ? valueDone(parent)
      : NONE;
  // Every other byte here starts a character.
  if (byte < 0x20 || frame.chars >= frame.max) return NONE;
  // Counted only where bounded: an unbounded string's state then repeats (and its masks can be
  // reused).
  const chars = frame.max === Infinity && frame.min === 0 ? 0 : frame.chars + 1;
  // An escape only where the pattern takes one of the characters a short escape writes.
  const takes = (content: number) => {
    const dstate = frame.dfa!.next(frame.dstate, content);
    return dstate >= 0 && frame.dfa!.fits(dstate, frame.min - chars, frame.max - chars);
  };
  if (byte === BACKSLASH)
    return frame.dfa === undefined || ESCAPED_CONTENT.some(takes)
      ? stack({ escape: true, chars })
      : NONE;
  if (byte < 0x80) return stack({ chars }, byte);
  // UTF-8, well formed (RFC 3629): no overlong forms, no surrogates, nothing past U+10FFFF.
  const lead = (cont: number, lo = 0x80, hi = 0xbf) => stack({ cont, lo, hi, chars }, byte);
  if (byte >= 0xc2 && byte <= 0xdf) return lead(1);
  if (byte === 0xe0) return lead(2, 0xa0);
  if (byte === 0xed) return lead(2, 0x80, 0x9f);
  if (byte >= 0xe1 && byte <= 0xef) return lead(2);
  if (byte === 0xf0) return lead(3, 0x90);
  if (byte >= 0xf1 && byte <= 0xf3) return lead(3);
  if (byte === 0xf4) return lead(3, 0x80, 0x8f);
  return NONE;
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

function literalByte(
  frame: Extract<Frame, { t: "literal" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  const matching = frame.values.filter(
    (value) => value.length > frame.pos && value[frame.pos] === byte,
  );
  if (matching.length === 0) return NONE;
  const out: Stack[] = [];
  if (matching.some((value) => value.length === frame.pos + 1)) out.push(...valueDone(parent));
  const longer = matching.filter((value) => value.length > frame.pos + 1);
  if (longer.length > 0)
    out.push(push({ t: "literal", values: longer, pos: frame.pos + 1 }, parent));
  return out;
}

/**
 * The properties a key may name after `next`: each one up to and including the first required one.
 */
function keyCandidates(properties: readonly Property[], next: number): number[] {
  const candidates: number[] = [];
  for (let index = next; index < properties.length; index += 1) {
    candidates.push(index);
    if (properties[index]!.required) break;
  }
  return candidates;
}

/** Whether the object may close once the properties before `next` are passed. */
const mayClose = (properties: readonly Property[], next: number) =>
  properties.slice(next).every((prop) => !prop.required);

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

/**
 * A declared object's key; its parent (the object, phase "colon") learns which property it named.
 */
function keyByte(
  frame: Extract<Frame, { t: "key" }>,
  parent: Stack | undefined,
  byte: number,
): readonly Stack[] {
  const object = parent?.frame;
  if (object === undefined || object.t !== "object") return NONE;
  const candidates = frame.candidates.filter(
    (index) => object.properties[index]!.key[frame.pos] === byte,
  );
  if (candidates.length === 0) return NONE;
  // Serialized keys end with a quote no other key can continue past, so at most one completes.
  const done = candidates.find((index) => object.properties[index]!.key.length === frame.pos + 1);
  if (done !== undefined)
    return [push({ ...object, phase: "colon", prop: done, next: done + 1 }, parent!.parent)];
  return [push({ t: "key", candidates, pos: frame.pos + 1 }, parent)];
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
