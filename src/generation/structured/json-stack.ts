// The JSON automaton's stack primitives: pushing a frame, the end and no-way states, the bytes of
// JSON's punctuation, and the parent a completed value returns to.
import { memoWeak } from "../../memos";
import type { Frame, Stack } from "./json-frames";

export const END: Stack = { frame: { t: "end" }, parent: undefined };
export const NONE: readonly Stack[] = [];

export const [QUOTE, BACKSLASH, COLON, COMMA] = [0x22, 0x5c, 0x3a, 0x2c];
export const [OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY] = [0x7b, 0x7d, 0x5b, 0x5d];

export const push = (frame: Frame, parent: Stack | undefined): Stack => ({ frame, parent });
export const STRING: Extract<Frame, { t: "string" }> = {
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

const selves = memoWeak<Stack, readonly Stack[]>("structured.same-stack");
/** A stack as its own successor, one array per stack. */
export function sameStack(stack: Stack): readonly Stack[] {
  let self = selves.get(stack);
  if (self === undefined) selves.set(stack, (self = [stack]));
  return self;
}

/** The parent once its child value is complete (END at the top). */
export function valueDone(parent: Stack | undefined): readonly Stack[] {
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
