// vLLM's `structured_outputs.regex`: the whole output matches the pattern, compiled to a byte-level
// DFA so the token masks walk bytes as the JSON automaton does.
import { SchemaError } from "./schema-error";
import { Nfa } from "./byte-nfa";
import { parseRegex } from "./regex-syntax";

/**
 * The most DFA states one constraint may make, its patterns together (each state holds 256
 * two-byte transitions, its accepting flag and two distances: 521 KiB at most per constraint,
 * which structured-outputs.ts's cache bounds).
 */
export const MAX_DFA_STATES = 1024;
const MAX_PATTERN = 4096;

/**
 * The fewest and the most characters (code points) from each state to a match: a byte that
 * starts a character counts one, a UTF-8 continuation byte none. `fewest` is Infinity where no
 * match can be reached; `most` is Infinity where a loop can repeat on the way (every loop
 * writes a character: continuation bytes alone never loop).
 */
function charsToMatch(
  table: Int16Array,
  accepting: Uint8Array,
): { fewest: Float32Array; most: Float32Array } {
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
  for (let state = 0; state < n; state += 1)
    if (accepting[state] === 1) {
      fewest[state] = 0;
      deque.push(state);
    }
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
  for (let state = 0; state < n; state += 1)
    if (fewest[state] !== Infinity && done[state] === 0) most[state] = Infinity;
  return { fewest, most };
}

/**
 * A DFA over bytes: state 0 is the start; `next` −1 where a byte is refused.
 *
 * Built from a Thompson NFA over bytes (byte-nfa.ts) by subset construction, up to MAX_DFA_STATES;
 * each state knows the fewest and most characters left to a match.
 */
export class ByteDfa {
  private readonly fewest: Float32Array;
  private readonly most: Float32Array;
  /**
   * The largest finite count of characters to a match, fewest or most, from any state: past
   * this many characters left (or owed), `fits` answers the same, so a state key may clip there.
   */
  readonly reach: number;

  private constructor(
    private readonly table: Int16Array,
    readonly accepting: Uint8Array,
  ) {
    ({ fewest: this.fewest, most: this.most } = charsToMatch(table, accepting));
    this.reach = [...this.fewest, ...this.most].reduce(
      (reach, chars) => (Number.isFinite(chars) ? Math.max(reach, chars) : reach),
      0,
    );
  }

  /** What its tables hold. */
  get bytes(): number {
    return (
      this.table.byteLength +
      this.accepting.byteLength +
      this.fewest.byteLength +
      this.most.byteLength
    );
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
  static compile(
    pattern: string,
    offset = 0,
    budget: { left: number } = { left: MAX_DFA_STATES },
  ): ByteDfa {
    if (pattern.length > MAX_PATTERN)
      throw new SchemaError("", `the regex is over ${MAX_PATTERN} characters`);
    const nfa = new Nfa();
    const start = nfa.state();
    const accept = nfa.build(parseRegex(pattern, offset), start);
    const ids = new Map<string, number>();
    const sets: number[][] = [];
    const add = (set: number[]) => {
      const key = set.join(",");
      let id = ids.get(key);
      if (id === undefined) {
        if (budget.left <= 0)
          throw new SchemaError(
            "",
            `the regex needs over ${MAX_DFA_STATES} automaton ` +
              "states (a schema's patterns together): simplify it",
          );
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
        for (const { lo, hi, to } of nfa.edges[state]!)
          for (let byte = lo; byte <= hi; byte += 1) targets[byte]!.push(to);
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
    const dfa = new ByteDfa(
      table,
      Uint8Array.from(sets, (set) => (set.includes(accept) ? 1 : 0)),
    );
    if (!dfa.fits(0)) throw new SchemaError("", "the regex matches no string");
    return dfa;
  }
}
