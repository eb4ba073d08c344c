// The JSON automaton's string and literal bytes: a string's escapes, well-formed UTF-8, length
// bounds and pattern, byte by byte; a literal (true, false, null, an enum's values) by prefix.
import type { Frame, Stack } from "./json-frames";
import { BACKSLASH, NONE, push, QUOTE, valueDone } from "./json-stack";

const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;
const isHex = (byte: number) =>
  isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
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

export function stringByte(
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

export function literalByte(
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
