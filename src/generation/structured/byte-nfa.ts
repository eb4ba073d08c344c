// A regex's syntax tree (regex-syntax.ts) as a Thompson NFA over bytes, for regex.ts's subset
// construction.
import { SchemaError } from "./schema-error";
import type { Node } from "./regex-syntax";

/** The most NFA states (bounded repetitions are expanded: `a{1000}` is a thousand copies). */
const MAX_NFA_STATES = 50_000;

/**
 * One code point range as UTF-8 byte-range sequences (surrogates left out), as Rust's regex-syntax
 * utf8 splits it.
 */
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
  if (code < 0x10000)
    return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
  return [
    0xf0 | (code >> 18),
    0x80 | ((code >> 12) & 0x3f),
    0x80 | ((code >> 6) & 0x3f),
    0x80 | (code & 0x3f),
  ];
}

/**
 * A Thompson NFA over bytes: each state's byte-range edges and ε-edges.
 *
 * Each character set becomes the UTF-8 byte sequences of its code points (split into ranges the way
 * Rust's regex-syntax splits them); bounded repetitions are copies.
 */
export class Nfa {
  readonly edges: { lo: number; hi: number; to: number }[][] = [];
  readonly epsilon: number[][] = [];

  state(): number {
    if (this.edges.length >= MAX_NFA_STATES)
      throw new SchemaError(
        "",
        `the regex expands to over ${MAX_NFA_STATES} automaton ` +
          "states (bounded repetitions are copies): simplify it",
      );
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
