// structured_outputs.regex compiled to a byte DFA, checked against JavaScript's own RegExp
// (`^(?:pattern)$` with the u flag) as the reference: strings the DFA generates by random walks
// must match, and those strings mutated (characters inserted, removed, replaced, from the
// pattern's alphabet and beyond ASCII) must get the same answer from both.
import { describe, expect, it } from "vitest";
import { ByteDfa, MAX_DFA_STATES } from "../../../../src/generation/structured/regex";
import { SchemaError } from "../../../../src/generation/structured/schema-error";

const utf8 = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

const PATTERNS = [
  "\\d{3}-\\d{4}",
  "[A-Z][a-z]{1,8}( [A-Z][a-z]{1,8})?",
  "(yes|no|maybe)",
  "[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,4}",
  "(\\+|-)?\\d+(\\.\\d+)?([eE][+-]?\\d+)?",
  "[^,\\n]{0,12}(,[^,\\n]{0,12}){2}",
  "\\w+\\s\\w+",
  "(?:ab|a)*b?",
  "(?P<year>\\d{4})-(?<month>0[1-9]|1[0-2])",
  "[äöüß€😀-😂]+x",
  ".{2,5}",
  "\\S+\\.\\s?",
  "[\\u00e0-\\u00ff\\x41-\\x43]{1,3}",
  "a{2,}?b*?c??",
  "^[01]{1,6}$",
  "(a|b|)c",
  "[\\d\\W]{3}",
  "\\(\\[\\{\\.\\*\\}\\]\\)",
];

/** A seeded generator (tests stay the same run to run). */
function random(seed: number): () => number {
  let state = seed;
  return () => ((state = (state * 1103515245 + 12345) % 2 ** 31), state / 2 ** 31);
}

/**
 * A string the DFA accepts, by a random walk over its transitions that stops at an accepting state
 * (undefined: none found).
 */
function walk(dfa: ByteDfa, next: () => number, maxBytes = 120): Uint8Array | undefined {
  const bytes: number[] = [];
  let state = 0;
  const ends: number[] = [];
  for (let i = 0; i < maxBytes; i += 1) {
    if (dfa.accepting[state] === 1) ends.push(bytes.length);
    if (dfa.accepting[state] === 1 && next() < 0.15) return Uint8Array.from(bytes);
    const options = Array.from({ length: 256 }, (_, byte) => byte).filter(
      (byte) => dfa.next(state, byte) >= 0,
    );
    if (options.length === 0) break;
    const byte = options[Math.floor(next() * options.length)]!;
    bytes.push(byte);
    state = dfa.next(state, byte);
  }
  if (dfa.accepting[state] === 1) return Uint8Array.from(bytes);
  const end = ends.at(-1);
  return end === undefined ? undefined : Uint8Array.from(bytes.slice(0, end));
}

function mutate(text: string, next: () => number, alphabet: readonly string[]): string {
  const chars = [...text];
  const at = Math.floor(next() * (chars.length + 1));
  const char = alphabet[Math.floor(next() * alphabet.length)]!;
  const kind = next();
  if (kind < 0.33) chars.splice(at, 0, char);
  else if (kind < 0.66 && chars.length > 0) chars.splice(Math.min(at, chars.length - 1), 1);
  else if (chars.length > 0) chars[Math.min(at, chars.length - 1)] = char;
  return chars.join("");
}

describe("structured_outputs.regex as a byte DFA", () => {
  for (const pattern of PATTERNS) {
    it(`${pattern}: agrees with JavaScript's RegExp on generated and mutated strings`, () => {
      const dfa = ByteDfa.compile(pattern);
      const reference = new RegExp(
        `^(?:${pattern.replace(/^\^/, "").replace(/\$$/, "").replaceAll("(?P<", "(?<")})$`,
        "u",
      );
      const next = random(pattern.length * 7919);
      const alphabet = [...new Set([..."aZ09 -_.,+@\n\té€😀😁ÿ", ...pattern])];
      let accepted = 0;
      for (let round = 0; round < 300; round += 1) {
        const bytes = walk(dfa, next);
        if (bytes === undefined) continue;
        const text = strict.decode(bytes); // throws on bytes that are not whole UTF-8
        expect(reference.test(text), JSON.stringify(text)).toBe(true);
        accepted += 1;
        for (let m = 0; m < 5; m += 1) {
          const mutated = mutate(text, next, alphabet);
          expect(
            dfa.matches(utf8.encode(mutated)),
            `${JSON.stringify(mutated)} (from ${JSON.stringify(text)})`,
          ).toBe(reference.test(mutated));
        }
      }
      expect(accepted).toBeGreaterThan(60);
    });
  }

  it(
    "the empty match: a pattern that matches nothing " +
      "but the empty output accepts at its start",
    () => {
      const dfa = ByteDfa.compile("(a{0})");
      expect(dfa.accepting[0]).toBe(1);
      expect(dfa.matches(utf8.encode("a"))).toBe(false);
    },
  );

  it("refuses by name what it cannot enforce", () => {
    for (const [pattern, why] of [
      ["(a)\\1", /backreference/],
      ["a(?=b)", /lookaround/],
      ["(?<!a)b", /lookaround/],
      ["(?i)abc", /flag or extension/],
      ["a++", /possessive/],
      ["\\bword", /word boundary/],
      ["a$b", /\$ before its end/],
      ["a^b", /\^ after its start/],
      ["(ab", /unclosed \(/],
      ["ab)", /unmatched \)/],
      ["[ab", /unclosed \[/],
      ["[z-a]", /out of order/],
      ["a{3,2}", /below its minimum/],
      ["a{1001}", /over 1000/],
      ["*a", /nothing to repeat/],
      ["\\q", /unknown escape/],
    ] as const) {
      expect(() => ByteDfa.compile(pattern), pattern).toThrow(SchemaError);
      expect(() => ByteDfa.compile(pattern), pattern).toThrow(why);
    }
    expect(() => ByteDfa.compile("(a|b|c|d|e|f|g|h)*a(a|b|c|d|e|f|g|h){14}")).toThrow(
      new RegExp(`over ${MAX_DFA_STATES} automaton states`),
    );
    // A schema's patterns share the budget: each alone fits, together they do not.
    const budget = { left: MAX_DFA_STATES };
    ByteDfa.compile("[a-z]{600}", 0, budget);
    expect(() => ByteDfa.compile("[a-z]{600}", 0, budget)).toThrow(SchemaError);
    expect(ByteDfa.compile("[a-z]{600}").bytes).toBeLessThanOrEqual(MAX_DFA_STATES * 521);
    expect(() => ByteDfa.compile("[^\\s\\S]"), "an empty class").toThrow(
      "the regex matches no string",
    );
    expect(() => ByteDfa.compile("a[^\\s\\S]|b[^\\d\\D]"), "no branch can match").toThrow(
      "the regex matches no string",
    );
  });

  // fits(state, atLeast, atMost) reads the fewest and most characters to a match: from the
  // start they are the pattern's shortest and longest match, in code points.
  it("knows the fewest and the most characters to a match, counting code points", () => {
    const bounds = (pattern: string) => {
      const dfa = ByteDfa.compile(pattern);
      const fewest = Array.from({ length: 60 }, (_, n) => n).find((n) => dfa.fits(0, 0, n));
      const most = dfa.fits(0, 60)
        ? Infinity
        : Array.from({ length: 60 }, (_, n) => 59 - n).find((n) => dfa.fits(0, n));
      return [fewest, most];
    };
    expect(bounds("\\d{3}-\\d{4}")).toEqual([8, 8]);
    expect(bounds("(yes|no|maybe)")).toEqual([2, 5]);
    expect(bounds(".{2,5}")).toEqual([2, 5]);
    expect(bounds("[äöüß€😀-😂]{2,3}x?")).toEqual([2, 4]);
    expect(bounds("[äöüß€😀-😂]+x")).toEqual([2, Infinity]);
    expect(bounds("(a|b|)c")).toEqual([1, 2]);
    expect(bounds("(a{0})")).toEqual([0, 0]);
    // Along a match, what is left shrinks by one per character (none per continuation byte).
    const dfa = ByteDfa.compile("漢{2}a");
    let state = 0;
    for (const [i, byte] of [...utf8.encode("漢漢")].entries()) {
      state = dfa.next(state, byte);
      const written = Math.floor(i / 3) + 1;
      expect(
        [dfa.fits(state, 0, 3 - written), dfa.fits(state, 0, 2 - written)],
        `after byte ${i}`,
      ).toEqual([true, false]);
    }
  });
});
