// tool_choice "auto" for models that call in Python syntax (vLLM's pythonic parser: Llama 3.2
// and 4): `[f(a=1), g()]`. The model outputs and the JSON expected are vLLM's own test cases
// (vllm-project/vllm: tests/tool_parsers/test_pythonic_tool_parser.py); where this reader
// answers otherwise the test says so. Every way of cutting the text gives the same result.
import { describe, expect, it } from "vitest";
import type { ToolMode } from "../../../../../src/tasks/text-generation/tool-parsers";
import { readEveryCut } from "../../../../support/tool-reading";

const PYTHONIC: ToolMode = { kind: "auto", parser: "pythonic" };
const read = (text: string) => readEveryCut(PYTHONIC, text, 13);

const SIMPLE = [
  "get_weather(city='San Francisco', metric='celsius')",
  { name: "get_weather", arguments: '{"city": "San Francisco", "metric": "celsius"}' },
] as const;
const MORE_TYPES = [
  "register_user(name='John Doe', age=37, address={'city': 'San Francisco', " +
    "'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])",
  {
    name: "register_user",
    arguments:
      '{"name": "John Doe", "age": 37, "address": {"city": "San Francisco", "state": ' +
      '"CA"}, "role": null, "passed_test": true, "aliases": ["John", "Johnny"]}',
  },
] as const;

describe("pythonic tool-call reader (tool_choice auto, pythonic)", () => {
  it("text is content (test_no_tool_call)", () => {
    expect(read("How can I help you today?")).toEqual({
      content: "How can I help you today?",
      calls: [],
    });
  });

  it(
    "one call; literals of every kind as vLLM's " + "json.dumps writes them (simple, more_types)",
    () => {
      expect(read(`[${SIMPLE[0]}]`)).toEqual({ content: "", calls: [SIMPLE[1]] });
      expect(read(`[${MORE_TYPES[0]}]`)).toEqual({ content: "", calls: [MORE_TYPES[1]] });
    },
  );

  it(
    "no arguments, an empty dict, an empty list, escaped quotes " +
      "(parameterless, empty_dict, empty_list, escaped_string)",
    () => {
      expect(read("[get_weather()]").calls).toEqual([{ name: "get_weather", arguments: "{}" }]);
      expect(read("[do_something_cool(additional_data={})]").calls).toEqual([
        { name: "do_something_cool", arguments: '{"additional_data": {}}' },
      ]);
      expect(read("[do_something_cool(steps=[])]").calls).toEqual([
        { name: "do_something_cool", arguments: '{"steps": []}' },
      ]);
      expect(
        read(String.raw`[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]`).calls,
      ).toEqual([
        {
          name: "get_weather",
          arguments: String.raw`{"city": "Martha's Vineyard", "metric": "\"cool units\""}`,
        },
      ]);
    },
  );

  it(
    "calls in parallel, white space and trailing commas as " +
      "Python allows them (parallel_calls, …with_large_steps)",
    () => {
      expect(read(`[${SIMPLE[0]}, ${MORE_TYPES[0]}]`).calls).toEqual([SIMPLE[1], MORE_TYPES[1]]);
      expect(read("[ f( a = [1, 2,] , b = {'k': -0.5e3,}, ) ,\n g() ]").calls).toEqual([
        { name: "f", arguments: '{"a": [1, 2], "b": {"k": -0.5e3}}' },
        { name: "g", arguments: "{}" },
      ]);
    },
  );

  it(
    "Python escapes and number forms become JSON; a " +
      "dict's number key a string, as json.dumps makes it",
    () => {
      expect(
        read(String.raw`[f(s='tab\tnew\nhex\x41uni\u00e9', d="q'uote", n=.5, m=5., k={1: 'one'})]`)
          .calls,
      ).toEqual([
        {
          name: "f",
          arguments:
            '{"s": "tab\\tnew\\nhexAuni\u00e9", "d": ' +
            '"q\'uote", "n": 0.5, "m": 5, "k": {"1": "one"}}',
        },
      ]);
    },
  );

  it(
    "what is not a call list is content: an empty list, numbers, a name " +
      "that is not a literal, mismatched brackets (vLLM's stream drops it)",
    () => {
      for (const text of [
        "[]",
        "[1, 2, 3] are the numbers",
        "[f(a=b)]",
        "[foo(x=1])]",
        " [get_weather()]",
        "[get weather()]",
      ])
        expect(read(text), text).toEqual({ content: text, calls: [] });
    },
  );

  it(
    "text after the list is dropped; a list cut short keeps the " +
      "calls it closed (vLLM's whole-response path makes both content)",
    () => {
      expect(read("[get_weather()] and more").calls).toEqual([
        { name: "get_weather", arguments: "{}" },
      ]);
      expect(read(`[${SIMPLE[0]}, register_user(name='Jo`)).toEqual({
        content: "",
        calls: [SIMPLE[1]],
      });
    },
  );

  it(
    "llama4_pythonic: <|python_start|> and <|python_end|> around the list " +
      "are dropped, around text too (vLLM's llama4_pythonic_tool_parser.py)",
    () => {
      const llama4: ToolMode = { kind: "auto", parser: "llama4_pythonic" };
      expect(readEveryCut(llama4, `<|python_start|>[${SIMPLE[0]}]<|python_end|>`, 17)).toEqual({
        content: "",
        calls: [SIMPLE[1]],
      });
      expect(readEveryCut(llama4, `[${SIMPLE[0]}]`, 17)).toEqual({
        content: "",
        calls: [SIMPLE[1]],
      });
      expect(readEveryCut(llama4, "<|python_start|>hello<|python_end|> there", 17)).toEqual({
        content: "hello there",
        calls: [],
      });
      expect(readEveryCut(llama4, "<|python is a snake", 17)).toEqual({
        content: "<|python is a snake",
        calls: [],
      });
      // The plain parser keeps the tags: its output is then not a list.
      expect(read(`<|python_start|>[${SIMPLE[0]}]`).calls).toEqual([]);
    },
  );
});
