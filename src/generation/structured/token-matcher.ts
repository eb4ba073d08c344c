// Structured outputs at the token level: which ids of a vocabulary may come next, so that a sampler
// keeps only those (vLLM's grammar bitmask).
import { canEnd, start, step, type Stack } from "./json-bytes";
import { stateKey } from "./state-key";
import { SCHEMA_LIMITS, SchemaError } from "./schema-error";
import type { Shape } from "./shapes";

/** The most ways an output may stand open at once (SCHEMA_LIMITS.openWays). */
export const MAX_OPEN_WAYS = SCHEMA_LIMITS.openWays;

interface TrieNode {
  readonly children: Map<number, TrieNode>;
  /** The ids whose bytes end here. */
  readonly ids: number[];
}

/**
 * A vocabulary's text ids by their bytes (special and unknown ids, with no bytes, are left out),
 * and the masks it has walked, by state: a state met again (inside a long string, the same
 * schema in the next request) costs a lookup, not a walk. The cache holds at most
 * `cacheBytes` of masks (one byte per id each), least recently used out first.
 *
 * The vocabulary's byte strings, walked once per step from the automaton's state: a shared prefix
 * is tried once, and a subtree the state refuses is never entered.
 */
export class VocabularyTrie {
  private readonly root: TrieNode = { children: new Map(), ids: [] };
  private readonly masks = new Map<string, Uint8Array>();
  private readonly maxMasks: number;
  /** The most bytes any token has: what a state's string bounds are clipped to in its key. */
  private longest = 0;

  /** @param bytes each id's bytes; empty for an id that is not text (a special token). */
  constructor(
    readonly size: number,
    bytes: (id: number) => Uint8Array,
    cacheBytes = 4 * 1024 * 1024,
  ) {
    this.maxMasks = Math.max(1, Math.floor(cacheBytes / Math.max(1, size)));
    for (let id = 0; id < size; id += 1) {
      const piece = bytes(id);
      if (piece.length === 0) continue;
      this.longest = Math.max(this.longest, piece.length);
      let node = this.root;
      for (const byte of piece) {
        let child = node.children.get(byte);
        if (child === undefined)
          node.children.set(byte, (child = { children: new Map(), ids: [] }));
        node = child;
      }
      node.ids.push(id);
    }
  }

  /** The ids whose bytes the automaton takes from `states` (read-only: it may be shared). */
  textMask(states: readonly Stack[]): Uint8Array {
    const key = stateKey(states, this.longest + 1);
    let mask = this.masks.get(key);
    if (mask !== undefined) {
      this.masks.delete(key); // most recently used goes last
    } else {
      mask = new Uint8Array(this.size);
      this.mark(states, mask);
      if (this.masks.size >= this.maxMasks) this.masks.delete(this.masks.keys().next().value!);
    }
    this.masks.set(key, mask);
    return mask;
  }

  /** Marks in `mask` every id whose bytes the automaton takes from `states`. */
  private mark(states: readonly Stack[], mask: Uint8Array): void {
    if (states.length > MAX_OPEN_WAYS) {
      throw new SchemaError(
        "",
        `the format leaves ${states.length} ways open at once here, over the limit ` +
          `of ${MAX_OPEN_WAYS} (anyOf options that start alike stay open together)`,
      );
    }
    const walk = (node: TrieNode, from: readonly Stack[]) => {
      for (const [byte, child] of node.children) {
        const next = from.flatMap((stack) => step(stack, byte));
        if (next.length === 0) continue;
        for (const id of child.ids) mask[id] = 1;
        walk(child, next);
      }
    };
    walk(this.root, states);
  }

  /** The states after an id's bytes (none: the automaton refuses them). */
  static advance(states: readonly Stack[], piece: Uint8Array): readonly Stack[] {
    let current = states;
    for (const byte of piece) {
      current = current.flatMap((stack) => step(stack, byte));
      if (current.length === 0) break;
    }
    return current;
  }
}

/** One generation's constraint: the ids allowed next, and the state after each id taken. */
export class TokenMatcher {
  private states: readonly Stack[];

  constructor(
    shape: Shape,
    private readonly trie: VocabularyTrie,
    private readonly bytes: (id: number) => Uint8Array,
  ) {
    this.states = start(shape);
  }

  /** Whether the output is complete: a stop id may end it now. */
  get complete(): boolean {
    return this.states.some(canEnd);
  }

  /**
   * The ids allowed next (1 in the mask; read-only, it may be shared): the text ids the
   * automaton takes, and `stopIds` where the output is complete. All zero: nothing may follow
   * (the caller ends the output). Throws SchemaError where the output stands open more than
   * MAX_OPEN_WAYS ways.
   */
  allowed(stopIds: Iterable<number>): Uint8Array {
    const text = this.trie.textMask(this.states);
    if (!this.complete) return text;
    const mask = Uint8Array.from(text);
    for (const id of stopIds) if (id >= 0 && id < mask.length) mask[id] = 1;
    return mask;
  }

  /** Takes a generated text id; false (and no change) where the automaton refuses its bytes. */
  accept(id: number): boolean {
    const piece = this.bytes(id);
    if (piece.length === 0) return false;
    const next = VocabularyTrie.advance(this.states, piece);
    if (next.length === 0) return false;
    this.states = next;
    return true;
  }
}
