// Every memo this isolate keeps from one request to the next is made here and named in one table
// (./table.ts: what it holds, when it is built, what bounds it). A module asks for its memo by
// name; /metrics counts their entries and tests can empty them.
import { MEMOS, type MemoName } from "./table";

export { MEMOS, type MemoName };

interface Kept {
  /** Entries held now; undefined where they cannot be counted (weak maps, objects). */
  readonly entries: () => number | undefined;
  readonly clear: () => void;
}

const kept = new Map<MemoName, Kept>();

/** Registers `value`, made by its module, as the memo `name`; returns it. */
export function keep<T>(name: MemoName, value: T, hooks: Partial<Kept> = {}): T {
  kept.set(name, {
    entries: hooks.entries ?? (() => undefined),
    clear: hooks.clear ?? (() => undefined),
  });
  return value;
}

/** A memo keyed by values (bounded by its module, as the table says). */
export function memoMap<K, V>(name: MemoName): Map<K, V> {
  const map = new Map<K, V>();
  return keep(name, map, { entries: () => map.size, clear: () => map.clear() });
}

/** A memo keyed by objects: an entry lives as long as its key. */
export class WeakMemo<K extends object, V> {
  #map = new WeakMap<K, V>();
  get(key: K): V | undefined {
    return this.#map.get(key);
  }
  has(key: K): boolean {
    return this.#map.has(key);
  }
  set(key: K, value: V): this {
    this.#map.set(key, value);
    return this;
  }
  delete(key: K): boolean {
    return this.#map.delete(key);
  }
  clear(): void {
    this.#map = new WeakMap();
  }
}

export function memoWeak<K extends object, V>(name: MemoName): WeakMemo<K, V> {
  const memo = new WeakMemo<K, V>();
  return keep(name, memo, { clear: () => memo.clear() });
}

/** One value (`slot.value ??= build()`), `initial` until it is built and after a clear. */
export interface Slot<T> {
  value: T;
}

export function memoSlot<T>(name: MemoName): Slot<T | undefined>;
export function memoSlot<T>(name: MemoName, initial: T): Slot<T>;
export function memoSlot<T>(name: MemoName, initial?: T): Slot<T | undefined> {
  const slot: Slot<T | undefined> = { value: initial };
  return keep(name, slot, {
    entries: () => (slot.value === initial ? 0 : 1),
    clear: () => {
      slot.value = initial;
    },
  });
}

/** The memos made so far, with their entries (for /metrics). */
export function memoEntries(): Array<{ name: MemoName; entries: number | undefined }> {
  return [...kept].map(([name, memo]) => ({ name, entries: memo.entries() }));
}

/** Empties every memo that can be emptied (tests that need a fresh isolate's state). */
export function clearMemos(): void {
  for (const memo of kept.values()) memo.clear();
}
