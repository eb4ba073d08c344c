// vLLM's `structured_outputs.regex`: the whole output matches the pattern. The pattern (the
// syntax Python's `re` and JavaScript share: literals, escapes, `.`, classes, groups,
// alternation, greedy and lazy quantifiers; `^` and `$` only at its ends) is compiled to a
// byte-level DFA, so the token masks walk bytes as the JSON automaton does: each character
// set becomes the UTF-8 byte sequences of its code points (the way Rust's regex-syntax splits
// ranges), a Thompson NFA is built over bytes, and subset construction makes the DFA, up to
// MAX_DFA_STATES. `\d` and `\w` are ASCII (as xgrammar's and JavaScript's); `\s` is
// JavaScript's white space and `.` anything but JavaScript's line terminators. Backreferences,
// lookaround, possessive quantifiers and flags are refused by name.
import { SchemaError } from "./json-schema";

/**
 * The most DFA states one constraint may make, its patterns together (each state holds 256
 * two-byte transitions: 512 KiB at most per constraint, which structured-outputs.ts's cache bounds).
 */
export const MAX_DFA_STATES = 1024;
/** The most NFA states (bounded repetitions are expanded: `a{1000}` is a thousand copies). */
const MAX_NFA_STATES = 50_000;
const MAX_PATTERN = 4096;
const MAX_REPEAT = 1000;
const MAX_CODE_POINT = 0x10ffff;

type Ranges = readonly (readonly [number, number])[];
type Node =
  | { readonly t: "set"; readonly ranges: Ranges }
  | { readonly t: "cat"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly options: readonly Node[] }
  | { readonly t: "rep"; readonly node: Node; readonly min: number; readonly max: number };

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
// JavaScript's \s: WhiteSpace and LineTerminator (ECMA-262 22.2.2.9).
const SPACE: Ranges = [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
// JavaScript's `.`: anything but a line terminator (so also what Python's `.` matches).
const DOT: Ranges = [[0, 0x09], [0x0b, 0x0c], [0x0e, 0x2027], [0x202a, MAX_CODE_POINT]];

/** Sorted, merged ranges. */
function normalize(ranges: Ranges): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out.at(-1);
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(ranges: Ranges): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

class Parser {
  private at = 0;
  /** `offset`: where the pattern the client wrote starts in `source` (positions are told in it). */
  constructor(
    private readonly source: string,
    private readonly offset = 0,
  ) {}

  parse(): Node {
    if (this.source.startsWith("^")) this.at = 1;
    const node = this.alternation();
    if (this.at < this.source.length) this.fail(this.source[this.at] === ")" ? "an unmatched )" : `unexpected ${this.source[this.at]}`);
    return node;
  }

  private fail(what: string, at = this.at): never {
    throw new SchemaError("", `the regex has ${what} at position ${Math.max(0, at - this.offset)}`);
  }

  private peek(): string | undefined {
    return this.source[this.at];
  }

  private alternation(): Node {
    const options = [this.concatenation()];
    while (this.peek() === "|") {
      this.at += 1;
      options.push(this.concatenation());
    }
    return options.length === 1 ? options[0]! : { t: "alt", options };
  }

  private concatenation(): Node {
    const items: Node[] = [];
    for (let char = this.peek(); char !== undefined && char !== "|" && char !== ")"; char = this.peek()) {
      if (char === "$") {
        this.at += 1;
        if (this.at === this.source.length) break;
        this.fail("$ before its end (only a $ that ends the pattern is supported)");
      }
      items.push(this.repetition(this.atom()));
    }
    return items.length === 1 ? items[0]! : { t: "cat", items };
  }

  private repetition(node: Node): Node {
    for (;;) {
      const char = this.peek();
      let bounds: [number, number] | undefined;
      if (char === "*") bounds = [0, Infinity];
      else if (char === "+") bounds = [1, Infinity];
      else if (char === "?") bounds = [0, 1];
      else if (char === "{") bounds = this.braces();
      if (bounds === undefined) return node;
      if (bounds !== undefined && char !== "{") this.at += 1;
      // A lazy quantifier matches the same strings; a possessive one does not.
      if (this.peek() === "?") this.at += 1;
      else if (this.peek() === "+") this.fail("a possessive quantifier");
      node = { t: "rep", node, min: bounds[0], max: bounds[1] };
    }
  }

  /** `{n}`, `{n,}`, `{n,m}` (the brace read); anything else is a literal `{`, as in Python. */
  private braces(): [number, number] | undefined {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
    if (match === null) return undefined;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
    if (max < min) this.fail(`a repetition {${min},${max}} whose maximum is below its minimum`);
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) this.fail(`a repetition over ${MAX_REPEAT}`);
    this.at += match[0].length;
    return [min, max];
  }

  private atom(): Node {
    const char = this.peek()!;
    this.at += 1;
    switch (char) {
      case "(":
        return this.group();
      case "[":
        return { t: "set", ranges: this.characterClass() };
      case ".":
        return { t: "set", ranges: DOT };
      case "\\":
        return { t: "set", ranges: this.escape(false) };
      case "*":
      case "+":
      case "?":
        return this.fail(`a quantifier ${char} with nothing to repeat`);
      case "^":
        return this.fail("^ after its start (only a ^ that starts the pattern is supported)");
      default: {
        const code = this.source.codePointAt(this.at - 1)!;
        if (code > 0xffff) this.at += 1;
        return { t: "set", ranges: [[code, code]] };
      }
    }
  }

  private group(): Node {
    if (this.peek() === "?") {
      const rest = this.source.slice(this.at);
      const named = /^\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(rest);
      if (rest.startsWith("?:")) this.at += 2;
      else if (named !== null) this.at += named[0].length;
      else this.fail(rest.startsWith("?=") || rest.startsWith("?!") || rest.startsWith("?<=") || rest.startsWith("?<!") ? "a lookaround" : "a group flag or extension", this.at - 1);
    }
    const node = this.alternation();
    if (this.peek() !== ")") this.fail("an unclosed (");
    this.at += 1;
    return node;
  }

  /** After `[`: the class's code point ranges. */
  private characterClass(): Ranges {
    const negated = this.peek() === "^";
    if (negated) this.at += 1;
    const ranges: (readonly [number, number])[] = [];
    let first = true;
    for (;;) {
      const char = this.peek();
      if (char === undefined) this.fail("an unclosed [");
      if (char === "]" && !first) {
        this.at += 1;
        break;
      }
      first = false;
      const low = this.classAtom();
      if (this.peek() === "-" && this.source[this.at + 1] !== "]" && this.source[this.at + 1] !== undefined && low.length === 1 && low[0]![0] === low[0]![1]) {
        this.at += 1;
        const high = this.classAtom();
        if (high.length !== 1 || high[0]![0] !== high[0]![1]) this.fail("a range whose end is a class");
        if (high[0]![0] < low[0]![0]) this.fail("a range out of order");
        ranges.push([low[0]![0], high[0]![0]]);
      } else {
        ranges.push(...low);
      }
    }
    return negated ? complement(ranges) : normalize(ranges);
  }

  private classAtom(): Ranges {
    const char = this.peek()!;
    this.at += 1;
    if (char === "\\") return this.escape(true);
    if (char === "[" && this.peek() === ":") this.fail("a POSIX class");
    const code = this.source.codePointAt(this.at - 1)!;
    if (code > 0xffff) this.at += 1;
    return [[code, code]];
  }

  /** After `\`: the escape's ranges. */
  private escape(inClass: boolean): Ranges {
    const backslash = this.at - 1;
    const char = this.peek();
    if (char === undefined) this.fail("a \\ at its end");
    this.at += 1;
    const single = (code: number): Ranges => [[code, code]];
    switch (char) {
      case "d":
        return DIGIT;
      case "D":
        return complement(DIGIT);
      case "w":
        return WORD;
      case "W":
        return complement(WORD);
      case "s":
        return SPACE;
      case "S":
        return complement(SPACE);
      case "n":
        return single(0x0a);
      case "t":
        return single(0x09);
      case "r":
        return single(0x0d);
      case "f":
        return single(0x0c);
      case "v":
        return single(0x0b);
      case "0":
        return single(0);
      case "x":
      case "u": {
        const length = char === "x" ? 2 : 4;
        const hex = this.source.slice(this.at, this.at + length);
        if (!new RegExp(`^[0-9A-Fa-f]{${length}}$`).test(hex)) this.fail(`a \\${char} escape without ${length} hex digits`, backslash);
        this.at += length;
        return single(Number.parseInt(hex, 16));
      }
      case "b":
        if (inClass) return single(0x08);
        return this.fail("a word boundary \\b", backslash);
      default:
        if (/[1-9]/.test(char)) this.fail("a backreference", backslash);
        if (/[A-Za-z]/.test(char)) this.fail(`an unknown escape \\${char}`, backslash);
        return single(char.codePointAt(0)!);
    }
  }
}

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
 * JSON Schema's `pattern` (ECMA-262, a search: it may match anywhere in the string) as a
 * whole-string pattern: `[\s\S]*` before it unless it starts with `^`, after it unless it
 * ends with `$`. Anchors on separate top-level alternatives (`^a|b$`) are refused.
 */
export function searchPattern(pattern: string): { source: string; offset: number } {
  const anchoredStart = pattern.startsWith("^");
  const anchoredEnd = endsWithAnchor(pattern);
  const inner = pattern.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined);
  if ((anchoredStart || anchoredEnd) && hasTopLevelAlternation(inner)) {
    throw new SchemaError("", "the regex anchors alternatives separately (^a|b$): group them, as ^(?:a|b)$");
  }
  const prefix = `${anchoredStart ? "" : "[\\s\\S]*"}(?:`;
  // Positions in errors are told in the pattern as written (its ^ dropped, the prefix added).
  return { source: `${prefix}${inner})${anchoredEnd ? "" : "[\\s\\S]*"}`, offset: prefix.length - (anchoredStart ? 1 : 0) };
}

/** Whether the pattern ends with a `$` that is not escaped. */
function endsWithAnchor(pattern: string): boolean {
  if (!pattern.endsWith("$")) return false;
  let backslashes = 0;
  for (let at = pattern.length - 2; at >= 0 && pattern[at] === "\\"; at -= 1) backslashes += 1;
  return backslashes % 2 === 0;
}

function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let at = 0; at < pattern.length; at += 1) {
    const char = pattern[at];
    if (char === "\\") at += 1;
    else if (inClass) inClass = char !== "]";
    else if (char === "[") inClass = true;
    else if (char === "(") depth += 1;
    else if (char === ")") depth -= 1;
    else if (char === "|" && depth === 0) return true;
  }
  return false;
}

/** A DFA over bytes: state 0 is the start; `next` −1 where a byte is refused. */
export class ByteDfa {
  private constructor(
    private readonly table: Int16Array,
    readonly accepting: Uint8Array,
  ) {}

  /** What its tables hold. */
  get bytes(): number {
    return this.table.byteLength + this.accepting.byteLength;
  }

  next(state: number, byte: number): number {
    return this.table[state * 256 + byte]!;
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
    const accept = nfa.build(new Parser(pattern, offset).parse(), start);
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
    return new ByteDfa(table, Uint8Array.from(sets, (set) => (set.includes(accept) ? 1 : 0)));
  }
}
