// Stop strings across token boundaries: nothing of a matched stop string is ever emitted,
// text that only looked like the start of one is released, and emitted text plus the
// match position equal the non-streamed truncation.
import { describe, expect, it } from "vitest";
import { stopMatcher } from "../../../../src/tasks/text-generation/stop-strings";

function run(deltas: readonly string[], stops: readonly string[]) {
  const matcher = stopMatcher(stops);
  let out = "";
  for (const delta of deltas) {
    const match = matcher.push(delta);
    out += match.text;
    if (match.stop !== undefined) return { out, stop: match.stop };
  }
  return { out: out + matcher.flush(), stop: undefined };
}

/** Every way of cutting `text` into pieces of 1..3 characters, deterministic. */
function cuts(text: string, seed: number): string[] {
  const pieces: string[] = [];
  let i = 0;
  while (i < text.length) {
    const size = 1 + ((seed = (seed * 31 + 7) % 97) % 3);
    pieces.push(text.slice(i, i + size));
    i += size;
  }
  return pieces;
}

describe("stopMatcher", () => {
  it("stops at a string split across deltas and emits nothing of it", () => {
    expect(run(["Hello wo", "rld. Th", "e end"], ["world"])).toEqual({
      out: "Hello ",
      stop: "world",
    });
  });

  it("releases held-back text that turned out not to be a stop string", () => {
    expect(run(["abc", "\n", "\nx"], ["\n\n\n"])).toEqual({ out: "abc\n\nx", stop: undefined });
    expect(run(["The end is wor"], ["world"])).toEqual({ out: "The end is wor", stop: undefined });
  });

  it("picks the earliest match among several stop strings", () => {
    expect(run(["one two three"], ["three", "two"])).toEqual({ out: "one ", stop: "two" });
  });

  it("gives the same text whatever the delta boundaries", () => {
    const text = "User: hi\nAssistant: hello there\nUser: bye";
    const expected = text.slice(0, text.indexOf("\nUser:"));
    for (let seed = 1; seed < 50; seed += 1) {
      const result = run(cuts(text, seed), ["\nUser:", "###"]);
      expect(result).toEqual({ out: expected, stop: "\nUser:" });
    }
  });

  it("passes text through untouched without stop strings (and ignores empty ones)", () => {
    expect(run(["a", "b"], [])).toEqual({ out: "ab", stop: undefined });
    expect(run(["a", "b"], [""])).toEqual({ out: "ab", stop: undefined });
  });

  it(
    "with include (vLLM's include_stop_str_in_output) ends " +
      "the text after the stop string, whatever the deltas",
    () => {
      const text = "one, two; three";
      for (let seed = 1; seed < 20; seed++) {
        const matcher = stopMatcher([";", "tw"], { include: true });
        let out = "";
        let stop: string | undefined;
        for (const delta of cuts(text, seed)) {
          const match = matcher.push(delta);
          out += match.text;
          if ((stop = match.stop) !== undefined) break;
        }
        expect({ out, stop }).toEqual({ out: "one, tw", stop: "tw" });
      }
    },
  );

  describe(
    "text pushed with search: false (vLLM's " + "min_tokens, vllm/v1/engine/detokenizer.py)",
    () => {
      it("holds no match: a stop string wholly inside it is sent as text", () => {
        const matcher = stopMatcher(["ab"]);
        expect(matcher.push("xaby", { search: false })).toEqual({ text: "xaby" });
        expect(matcher.push("zz")).toEqual({ text: "zz" });
      });

      it(
        "a stop string that begins in it and ends " + "after it counts, and nothing of it is sent",
        () => {
          const matcher = stopMatcher(["abc"]);
          expect(matcher.push("xab", { search: false })).toEqual({ text: "x" });
          expect(matcher.push("cd")).toEqual({ text: "", stop: "abc" });
        },
      );

      it("a shorter stop string completed inside held-back text does not count later", () => {
        // "abc" is held back as the start of "abcd"; "ab" inside it ended while searching was off.
        const matcher = stopMatcher(["ab", "abcd"]);
        expect(matcher.push("abc", { search: false })).toEqual({ text: "" });
        expect(matcher.push("x")).toEqual({ text: "abcx" });
        expect(matcher.push("ab")).toEqual({ text: "", stop: "ab" });
      });

      it("the same text pushed with search on matches as before", () => {
        const matcher = stopMatcher(["ab"]);
        expect(matcher.push("xaby")).toEqual({ text: "x", stop: "ab" });
      });
    },
  );
});
