// The regex syntax structured outputs take (regex.ts compiles it): the part Python's `re` and
// JavaScript share, parsed to character sets over code points.
import { SchemaError } from "./schema-error";
import {
  complement,
  CONTROL_ESCAPES,
  DIGIT,
  DOT,
  normalize,
  type Ranges,
  SPACE,
  WORD,
} from "./code-point-sets";

const MAX_REPEAT = 1000;

export type Node =
  | { readonly t: "set"; readonly ranges: Ranges }
  | { readonly t: "cat"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly options: readonly Node[] }
  | { readonly t: "rep"; readonly node: Node; readonly min: number; readonly max: number };

/**
 * Parses a pattern; `offset`: where the pattern the client wrote starts in `source` (positions in
 * errors are told in it).
 *
 * Taken: literals, escapes, `.`, classes (non-ASCII ranges too), `\d` `\w` (ASCII) and `\s`
 * (JavaScript's white space) and their negations, groups (capturing, non-capturing, named),
 * alternation, greedy and lazy quantifiers, `^` and `$` only at the pattern's ends. Backreferences,
 * lookaround, `\b`, possessive quantifiers and flags are refused by name, with their position.
 */
export function parseRegex(source: string, offset = 0): Node {
  return new Parser(source, offset).parse();
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
    if (this.at < this.source.length)
      this.fail(
        this.source[this.at] === ")" ? "an unmatched )" : `unexpected ${this.source[this.at]}`,
      );
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
    for (
      let char = this.peek();
      char !== undefined && char !== "|" && char !== ")";
      char = this.peek()
    ) {
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
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT))
      this.fail(`a repetition over ${MAX_REPEAT}`);
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
      else
        this.fail(
          rest.startsWith("?=") ||
            rest.startsWith("?!") ||
            rest.startsWith("?<=") ||
            rest.startsWith("?<!")
            ? "a lookaround"
            : "a group flag or extension",
          this.at - 1,
        );
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
      if (
        this.peek() === "-" &&
        this.source[this.at + 1] !== "]" &&
        this.source[this.at + 1] !== undefined &&
        low.length === 1 &&
        low[0]![0] === low[0]![1]
      ) {
        this.at += 1;
        const high = this.classAtom();
        if (high.length !== 1 || high[0]![0] !== high[0]![1])
          this.fail("a range whose end is a class");
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
    const control = CONTROL_ESCAPES[char];
    if (control !== undefined) return single(control);
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
      case "x":
      case "u": {
        const length = char === "x" ? 2 : 4;
        const hex = this.source.slice(this.at, this.at + length);
        if (!new RegExp(`^[0-9A-Fa-f]{${length}}$`).test(hex))
          this.fail(`a \\${char} escape without ${length} hex digits`, backslash);
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
