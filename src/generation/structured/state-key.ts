// A key for an automaton state (json-bytes.ts): the token masks are cached by it, so equal
// keys must mean equal masks.
import { keep } from "../../memos";
import type { Stack } from "./json-frames";

// Numbers are never reused, so a cleared memo cannot give a new shape an old shape's masks.
const identities = keep(
  "structured.state-ids",
  { ids: new WeakMap<object, number>(), next: 0 },
  { clear: () => void (identities.ids = new WeakMap()) },
);
const identity = (value: object) => {
  let id = identities.ids.get(value);
  if (id === undefined) identities.ids.set(value, (id = identities.next++));
  return id;
};

/**
 * A key for a state: equal keys, equal masks (shapes and property lists by identity). A
 * string's length bounds enter as what is left of them, clipped at `horizon` (more than any
 * one token's bytes): within one token, a string 40 characters from its bound and one 60
 * away allow the same ids, so their masks are shared. A patterned string's clip is further
 * out by its DFA's reach, since what is left also decides whether the pattern can still match.
 */
export function stateKey(states: readonly Stack[], horizon = Infinity): string {
  const parts: string[] = [];
  for (const top of states) {
    for (let stack: Stack | undefined = top; stack !== undefined; stack = stack.parent) {
      const frame = stack.frame;
      if (frame.t === "string") {
        const clip = frame.dfa === undefined ? horizon : horizon + frame.dfa.reach;
        const left = Math.min(frame.max - frame.chars, clip);
        const owed = Math.min(Math.max(0, frame.min - frame.chars), clip);
        parts.push(
          `s${Number(frame.escape)}.${frame.hex}.${frame.cont}.` +
            `${frame.lo}.${frame.hi}.${left}.${owed}` +
            `${frame.dfa === undefined ? "" : `.#${identity(frame.dfa)}:${frame.dstate}`}`,
        );
      } else {
        for (const value of Object.values(frame))
          parts.push(
            typeof value === "object" && value !== null ? `#${identity(value)}` : String(value),
          );
      }
      parts.push("/");
    }
    parts.push("|");
  }
  return parts.join(",");
}
