// tool_choice "auto" for Llama 3.x/4 models (vLLM's llama3_json parser): JSON objects with a
// name and parameters are calls, `;` or white space between them. The model outputs are vLLM's
// own test cases (vllm-project/vllm: tests/tool_parsers/test_llama3_json_tool_parser.py); where
// this reader answers otherwise the test says so (text before the calls is kept as content, an
// unfinished call keeps what was written). Every way of cutting the text gives the same result.
import { describe, expect, it } from "vitest";
import type { ToolMode } from "../../../../../src/tasks/text-generation/tool-parsers";
import { readEveryCut } from "../../../../support/tool-reading";

const LLAMA: ToolMode = { kind: "auto", parser: "llama3_json" };

const read = (text: string) => readEveryCut(LLAMA, text, 5);

describe("Llama 3 JSON tool-call reader (tool_choice auto, llama3_json)", () => {
  it(
    "a call with parameters, or with arguments; <|python_tag|> " +
      "before it is dropped (…with_arguments, …with_arguments_key)",
    () => {
      expect(
        read('{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}'),
      ).toEqual({
        content: "",
        calls: [{ name: "searchTool", arguments: '{"query": "test query", "limit": 10}' }],
      });
      expect(read('{"name": "searchTool", "arguments": {"query": "test"}}').calls).toEqual([
        { name: "searchTool", arguments: '{"query": "test"}' },
      ]);
      expect(read('<|python_tag|>{"name": "searchTool", "parameters": {}}')).toEqual({
        content: "",
        calls: [{ name: "searchTool", arguments: "{}" }],
      });
    },
  );

  it(
    "text alone is content (…no_json); text before a call is " +
      "content too, text after it dropped (…simple: vLLM drops both)",
    () => {
      expect(read("This is just some text without any tool calls")).toEqual({
        content: "This is just some text without any tool calls",
        calls: [],
      });
      expect(
        read(
          'Here is the result: {"name": "getOpenIncidentsTool", ' +
            '"parameters": {}} Would you like to know more?',
        ),
      ).toEqual({
        content: "Here is the result: ",
        calls: [{ name: "getOpenIncidentsTool", arguments: "{}" }],
      });
    },
  );

  for (const separator of ["; ", ";", ";\n", "\n", " ; "]) {
    it(
      `calls separated by ${JSON.stringify(separator)} ` +
        "(…multiple_json, …streaming_parallel_separators)",
      () => {
        const text = [
          '{"name": "searchTool", "parameters": {"query": "test1"}}',
          '{"name": "getOpenIncidentsTool", "parameters": {}}',
          '{"name": "searchTool", "parameters": {"query": "test2"}}',
        ].join(separator);
        expect(read(text).calls).toEqual([
          { name: "searchTool", arguments: '{"query": "test1"}' },
          { name: "getOpenIncidentsTool", arguments: "{}" },
          { name: "searchTool", arguments: '{"query": "test2"}' },
        ]);
      },
    );
  }

  it(
    "deep nesting, braces and brackets in strings, escaped quotes (…deeply_nested_json, " +
      "…quotes_and_brackets_in_string, …escaped_quotes_in_nested_json)",
    () => {
      const deep = read(
        '{"name": "complexTool", "parameters": {"level1": ' +
          '{"level2": {"level3": {"level4": {"value": "deep"}}}}}}',
      );
      expect(JSON.parse(deep.calls[0]!.arguments)).toEqual({
        level1: { level2: { level3: { level4: { value: "deep" } } } },
      });
      const braces = read(
        '{"name": "searchTool", "parameters": {"query": "test ' +
          '{value} [complex]","nested": {"inner": "more {brackets}"}}}',
      );
      expect(JSON.parse(braces.calls[0]!.arguments)).toEqual({
        query: "test {value} [complex]",
        nested: { inner: "more {brackets}" },
      });
      const quotes = read(
        '{"name": "parserTool", "parameters": {"text": "He said \\"Hello {world}\\""}}',
      );
      expect(JSON.parse(quotes.calls[0]!.arguments)).toEqual({ text: 'He said "Hello {world}"' });
    },
  );

  it(
    "an object without a name, or without parameters, is not a call: content " +
      "as written (…missing_name_key, …missing_parameters_and_arguments_key)",
    () => {
      expect(read('{"parameters": {}}')).toEqual({ content: '{"parameters": {}}', calls: [] });
      expect(read('{"name": "toolWithoutParams"}')).toEqual({
        content: '{"name": "toolWithoutParams"}',
        calls: [],
      });
      // A JSON answer that happens to have a name.
      expect(read('{"name": "Bob", "age": 41}')).toEqual({
        content: '{"name": "Bob", "age": 41}',
        calls: [],
      });
    },
  );

  it(
    "after a call, braces and JSON fragments in the prose are dropped, the " +
      "call kept (…brace_in_trailing_text, …json_fragment_in_trailing_text)",
    () => {
      expect(
        read(
          '{"name": "searchTool", "parameters": {"query": "test"}} I used {searchTool} for this.',
        ),
      ).toEqual({ content: "", calls: [{ name: "searchTool", arguments: '{"query": "test"}' }] });
      expect(
        read(
          '{"name": "searchTool", "parameters": {"query": ' +
            '"test"}} The arguments I passed were {"query": "test"}',
        ),
      ).toEqual({ content: "", calls: [{ name: "searchTool", arguments: '{"query": "test"}' }] });
    },
  );

  it(
    "a call cut off keeps what was written (…invalid_json: " +
      "vLLM's whole-response path makes it content)",
    () => {
      expect(read('{"name": "invalidTool", "parameters": {invalid json}').calls).toEqual([
        { name: "invalidTool", arguments: "{invalid json}" },
      ]);
      expect(read('{"name": "t", "parameters": {"q": "ab').calls).toEqual([
        { name: "t", arguments: '{"q": "ab' },
      ]);
    },
  );
});
