// vLLM's `structured_outputs.regex`: the whole output matches the pattern. The pattern (parsed
// by regex-syntax.ts) is compiled to a byte-level DFA, so the token masks walk bytes as the
// JSON automaton does: each character set becomes the UTF-8 byte sequences of its code points
// (the way Rust's regex-syntax splits ranges), a Thompson NFA is built over bytes, and subset
// construction makes the DFA, up to MAX_DFA_STATES.
import { SchemaError } from "./json-schema";
import { parseRegex, type Node } from "./regex-syntax";

/**
 * The most DFA states one constraint may make, its patterns together (each state holds 256
 * two-byte transitions, its accepting flag and two distances: 521 KiB at most per constraint,
 * which structured-outputs.ts's cache bounds).
 */
export const MAX_DFA_STATES = 1024;
/** The most NFA states (bounded repetitions are expanded: `a{1000}` is a thousand copies). */
const MAX_NFA_STATES = 50_000;
const MAX_PATTERN = 4096;

/** One code point range as UTF-8 byte-range sequences (surrogates left out), as Rust's regex-syntax utf8 splits it. */
function utf8Sequences(lo: number, hi: number, out: (readonly [number, number])[][]): void {
  if (lo > hi) return;
  if (lo < 0xd800 && hi > 0xdfff) {
    utf8Sequences(lo, 0xd7ff, out);
    utf8Sequences(0xe000, hi, out);
    return;
  }
  if (lo >= 0xd800 && lo <= 0xdfff) lo = 0xe000;
  if (hi >= 0xd800 && hi <= 0xdfff) hi = 0xd7ff;
  if (lo > hi) return;
  for (const max of [0x7f, 0x7ff, 0xffff]) {
    if (lo <= max && hi > max) {
      utf8Sequences(lo, max, out);
      utf8Sequences(max + 1, hi, out);
      return;
    }
  }
  if (hi <= 0x7f) {
    out.push([[lo, hi]]);
    return;
  }
  for (let i = 1; i < 4; i += 1) {
    const mask = (1 << (6 * i)) - 1;
    if ((lo & ~mask) !== (hi & ~mask)) {
      if ((lo & mask) !== 0) {
        utf8Sequences(lo, lo | mask, out);
        utf8Sequences((lo | mask) + 1, hi, out);
        return;
      }
      if ((hi & mask) !== mask) {
        utf8Sequences(lo, (hi & ~mask) - 1, out);
        utf8Sequences(hi & ~mask, hi, out);
        return;
      }
    }
  }
  const a = utf8Bytes(lo);
  const b = utf8Bytes(hi);
  out.push(a.map((byte, i) => [byte, b[i]!] as const));
}

function utf8Bytes(code: number): number[] {
  if (code < 0x80) return [code];
  if (code < 0x800) return [0xc0 | (code >> 6), 0x80 | (code & 0x3f)];
  if (code < 0x10000) return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
  return [0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
}

/** A Thompson NFA over bytes: each state's byte-range edges and ε-edges. */
class Nfa {
  readonly edges: { lo: number; hi: number; to: number }[][] = [];
  readonly epsilon: number[][] = [];

  state(): number {
    if (this.edges.length >= MAX_NFA_STATES) throw new SchemaError("", `the regex expands to over ${MAX_NFA_STATES} automaton states (bounded repetitions are copies): simplify it`);
    this.edges.push([]);
    this.epsilon.push([]);
    return this.edges.length - 1;
  }

  /** `node` from `from`; returns its end state. */
  build(node: Node, from: number): number {
    switch (node.t) {
      case "set": {
        const end = this.state();
        const sequences: (readonly [number, number])[][] = [];
        for (const [lo, hi] of node.ranges) utf8Sequences(lo, hi, sequences);
        for (const sequence of sequences) {
          let at = from;
          sequence.forEach(([lo, hi], i) => {
            const to = i === sequence.length - 1 ? end : this.state();
            this.edges[at]!.push({ lo, hi, to });
            at = to;
          });
        }
        return end;
      }
      case "cat":
        return node.items.reduce((at, item) => this.build(item, at), from);
      case "alt": {
        const end = this.state();
        for (const option of node.options) {
          const start = this.state();
          this.epsilon[from]!.push(start);
          this.epsilon[this.build(option, start)]!.push(end);
        }
        return end;
      }
      case "rep": {
        let at = from;
        for (let i = 0; i < node.min; i += 1) at = this.build(node.node, at);
        if (node.max === Infinity) {
          const loop = this.state();
          this.epsilon[at]!.push(loop);
          const end = this.state();
          this.epsilon[loop]!.push(end);
          const body = this.state();
          this.epsilon[loop]!.push(body);
          this.epsilon[this.build(node.node, body)]!.push(loop);
          return end;
        }
        const end = this.state();
        for (let i = node.min; i < node.max; i += 1) {
          this.epsilon[at]!.push(end);
          at = this.build(node.node, at);
        }
        this.epsilon[at]!.push(end);
        return end;
      }
    }
  }

  closure(states: Iterable<number>): number[] {
    const seen = new Set<number>();
    const stack = [...states];
    while (stack.length > 0) {
      const state = stack.pop()!;
      if (seen.has(state)) continue;
      seen.add(state);
      stack.push(...this.epsilon[state]!);
    }
    return [...seen].sort((a, b) => a - b);
  }
}

/**
 * The fewest and the most characters (code points) from each state to a match: a byte that
 * starts a character counts one, a UTF-8 continuation byte none. `fewest` is Infinity where no
 * match can be reached; `most` is Infinity where a loop can repeat on the way (every loop
 * writes a character: continuation bytes alone never loop).
 */
function charsToMatch(table: Int16Array, accepting: Uint8Array): { fewest: Float32Array; most: Float32Array } {
  const n = accepting.length;
  // Each state's distinct (successor, weight) edges, kept reversed.
  const into: number[][] = Array.from({ length: n }, () => []);
  for (let from = 0; from < n; from += 1) {
    const seen = new Set<number>();
    for (let byte = 0; byte < 256; byte += 1) {
      const to = table[from * 256 + byte]!;
      if (to < 0) continue;
      const edge = to * 2 + ((byte & 0xc0) === 0x80 ? 0 : 1);
      if (seen.has(edge)) continue;
      seen.add(edge);
      into[to]!.push(from * 2 + (edge & 1));
    }
  }
  // Fewest: a 0-1 breadth-first search back from the accepting states.
  const fewest = new Float32Array(n).fill(Infinity);
  const deque: number[] = [];
  for (let state = 0; state < n; state += 1) if (accepting[state] === 1) (fewest[state] = 0), deque.push(state);
  while (deque.length > 0) {
    const to = deque.shift()!;
    for (const edge of into[to]!) {
      const [from, weight] = [edge >> 1, edge & 1];
      if (fewest[to]! + weight >= fewest[from]!) continue;
      fewest[from] = fewest[to]! + weight;
      if (weight === 0) deque.unshift(from);
      else deque.push(from);
    }
  }
  // Most: the longest way over states that can still match, taken in reverse topological order
  // (a state once all its successors are done); a state never done reaches a loop.
  const most = new Float32Array(n).fill(-Infinity);
  const pending = new Int32Array(n);
  for (let to = 0; to < n; to += 1) {
    if (fewest[to] === Infinity) continue;
    for (const edge of into[to]!) pending[edge >> 1] = pending[edge >> 1]! + 1;
  }
  const ready: number[] = [];
  for (let state = 0; state < n; state += 1) {
    if (accepting[state] === 1) most[state] = 0;
    if (fewest[state] !== Infinity && pending[state] === 0) ready.push(state);
  }
  const done = new Uint8Array(n);
  while (ready.length > 0) {
    const to = ready.pop()!;
    done[to] = 1;
    for (const edge of into[to]!) {
      const [from, weight] = [edge >> 1, edge & 1];
      most[from] = Math.max(most[from]!, most[to]! + weight);
      pending[from] = pending[from]! - 1;
      if (pending[from] === 0) ready.push(from);
    }
  }
  for (let state = 0; state < n; state += 1) if (fewest[state] !== Infinity && done[state] === 0) most[state] = Infinity;
  return { fewest, most };
}

/** A DFA over bytes: state 0 is the start; `next` −1 where a byte is refused. */
export class ByteDfa {
  private readonly fewest: Float32Array;
  private readonly most: Float32Array;

  private constructor(
    private readonly table: Int16Array,
    readonly accepting: Uint8Array,
  ) {
    ({ fewest: this.fewest, most: this.most } = charsToMatch(table, accepting));
  }

  /** What its tables hold. */
  get bytes(): number {
    return this.table.byteLength + this.accepting.byteLength + this.fewest.byteLength + this.most.byteLength;
  }

  next(state: number, byte: number): number {
    return this.table[state * 256 + byte]!;
  }

  /**
   * Whether a match can still be reached from `state` in `atLeast` to `atMost` more characters,
   * judged by the fewest and the most it takes: exact unless the pattern matches only some
   * lengths in between (`(aa)+` under an odd bound), where a walk can still end up stuck.
   */
  fits(state: number, atLeast = 0, atMost = Infinity): boolean {
    return this.fewest[state]! <= atMost && this.most[state]! >= atLeast;
  }

  get size(): number {
    return this.accepting.length;
  }

  /** Whether the pattern matches the whole of `bytes` (tests). */
  matches(bytes: Uint8Array): boolean {
    let state = 0;
    for (const byte of bytes) {
      state = this.next(state, byte);
      if (state < 0) return false;
    }
    return this.accepting[state] === 1;
  }

  /**
   * Compiles a pattern; one it cannot take, or one too large, throws SchemaError. `budget`: the
   * states the constraint has left (a schema's patterns share one), taken from as states are made.
   */
  static compile(pattern: string, offset = 0, budget: { left: number } = { left: MAX_DFA_STATES }): ByteDfa {
    if (pattern.length > MAX_PATTERN) throw new SchemaError("", `the regex is over ${MAX_PATTERN} characters`);
    const nfa = new Nfa();
    const start = nfa.state();
    const accept = nfa.build(parseRegex(pattern, offset), start);
    const ids = new Map<string, number>();
    const sets: number[][] = [];
    const add = (set: number[]) => {
      const key = set.join(",");
      let id = ids.get(key);
      if (id === undefined) {
        if (budget.left <= 0) throw new SchemaError("", `the regex needs over ${MAX_DFA_STATES} automaton states (a schema's patterns together): simplify it`);
        budget.left -= 1;
        id = sets.length;
        ids.set(key, id);
        sets.push(set);
      }
      return id;
    };
    add(nfa.closure([start]));
    const rows: Int16Array[] = [];
    for (let id = 0; id < sets.length; id += 1) {
      const row = new Int16Array(256).fill(-1);
      const targets: number[][] = Array.from({ length: 256 }, () => []);
      for (const state of sets[id]!) {
        for (const { lo, hi, to } of nfa.edges[state]!) for (let byte = lo; byte <= hi; byte += 1) targets[byte]!.push(to);
      }
      const byKey = new Map<string, number>();
      for (let byte = 0; byte < 256; byte += 1) {
        if (targets[byte]!.length === 0) continue;
        const raw = targets[byte]!.sort((a, b) => a - b).join(",");
        let target = byKey.get(raw);
        if (target === undefined) byKey.set(raw, (target = add(nfa.closure(targets[byte]!))));
        row[byte] = target;
      }
      rows.push(row);
    }
    const table = new Int16Array(rows.length * 256);
    rows.forEach((row, id) => table.set(row, id * 256));
    const dfa = new ByteDfa(table, Uint8Array.from(sets, (set) => (set.includes(accept) ? 1 : 0)));
    if (!dfa.fits(0)) throw new SchemaError("", "the regex matches no string");
    return dfa;
  }
}
