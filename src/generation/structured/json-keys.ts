// A declared object's keys in the JSON automaton: which properties a key may name next (in
// order, up to the first required one), whether the object may close, and a key's bytes.
import type { Frame, Stack } from "./json-frames";
import { NONE, push } from "./json-stack";
import type { Property } from "./shapes";

/**
 * The properties a key may name after `next`: each one up to and including the first required one.
 */
export function keyCandidates(properties: readonly Property[], next: number): number[] {
  const candidates: number[] = [];
  for (let index = next; index < properties.length; index += 1) {
    candidates.push(index);
    if (properties[index]!.required) break;
  }
  return candidates;
}

/** Whether the object may close once the properties before `next` are passed. */
export const mayClose = (properties: readonly Property[], next: number) =>
  properties.slice(next).every((prop) => !prop.required);

/**
 * A declared object's key; its parent (the object, phase "colon") learns which property it named.
 */
export function keyByte(
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
