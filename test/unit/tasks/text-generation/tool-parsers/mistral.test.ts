// tool_choice "auto" for Mistral models (vLLM's mistral parser): calls after [TOOL_CALLS], as
// `name{args}` (tokenizer v11 and later) or a `[{"name", "arguments"}]` list (before v11). The
// model outputs are vLLM's own test cases (vllm-project/vllm:
// tests/tool_parsers/test_mistral_tool_parser.py); where this reader answers otherwise the test
// says so (arguments as written; text after the calls dropped). Every way of cutting the text
// gives the same result.
import { describe, expect, it } from "vitest";
import type { ToolMode } from "../../../../../src/tasks/text-generation/tool-parsers";
import { readEveryCut } from "../../../../support/tool-reading";

const MISTRAL: ToolMode = { kind: "auto", parser: "mistral" };

const read = (text: string) => readEveryCut(MISTRAL, text, 11);

const WEATHER = '{"city": "San Francisco", "state": "CA", "unit": "celsius"}';

describe("Mistral tool-call reader (tool_choice auto, mistral)", () => {
  it("text alone is content (…no_tools)", () => {
    expect(read("This is a test")).toEqual({ content: "This is a test", calls: [] });
  });

  describe("tokenizer v11 and later: [TOOL_CALLS]name{arguments}", () => {
    it("one call, and two (single_tool_add, single_tool_weather, multiple_tool_calls)", () => {
      expect(read('[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}')).toEqual({
        content: "",
        calls: [{ name: "add_this_and_that", arguments: '{"a": 3.5, "b": 4}' }],
      });
      expect(read(`[TOOL_CALLS]get_current_weather${WEATHER}`).calls).toEqual([
        { name: "get_current_weather", arguments: WEATHER },
      ]);
      expect(
        read('[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}').calls,
      ).toEqual([
        { name: "add", arguments: '{"a": 3.5, "b": 4}' },
        { name: "multiply", arguments: '{"a": 3, "b": 6}' },
      ]);
    });

    it(
      "content before the call; braces and escapes in the " +
        "arguments (content_before_tool, complex, wrong_json)",
      () => {
        expect(read('bla[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}')).toEqual({
          content: "bla",
          calls: [{ name: "add_this_and_that", arguments: '{"a": 3.5, "b": 4}' }],
        });
        const command = String.raw`{"command": "print(\"hello world!\")\nre.compile(r'{}')"}`;
        expect(read(`hi{hi[TOOL_CALLS]bash${command}`)).toEqual({
          content: "hi{hi",
          calls: [{ name: "bash", arguments: command }],
        });
        // Cut short (the "complex" case: its closing `"}` never written): what was written.
        expect(read(`hi{hi[TOOL_CALLS]bash${command.slice(0, -2)}`)).toEqual({
          content: "hi{hi",
          calls: [{ name: "bash", arguments: command.slice(0, -2) }],
        });
      },
    );

    it(
      "[ARGS] between the name and its arguments (a " +
        "Hugging Face tokenizer writes it) is not the name's",
      () => {
        expect(read('[TOOL_CALLS]add[ARGS]{"a": 1}').calls).toEqual([
          { name: "add", arguments: '{"a": 1}' },
        ]);
      },
    );

    it(
      "a call without arguments is dropped (…v11_without_args_skipped); " +
        "text after a call's arguments is not theirs (vLLM keeps it in them)",
      () => {
        expect(read("[TOOL_CALLS]toolname_no_args")).toEqual({ content: "", calls: [] });
        expect(read('[TOOL_CALLS]add{"a": 1}</s> trailing').calls).toEqual([
          { name: "add", arguments: '{"a": 1}' },
        ]);
      },
    );
  });

  describe("before v11: [TOOL_CALLS] [{name, arguments}, …]", () => {
    it(
      "one call, two, and white space around the " +
        "list's parts (single_tool_add, multiple_tools)",
      () => {
        expect(read('[TOOL_CALLS][{"name": "add", "arguments":{"a": 3.5, "b": 4}}]')).toEqual({
          content: "",
          calls: [{ name: "add", arguments: '{"a": 3.5, "b": 4}' }],
        });
        expect(
          read('[TOOL_CALLS]  [ {"name":"add" , "arguments" : {"a": 3, "b": 4} } ]').calls,
        ).toEqual([{ name: "add", arguments: '{"a": 3, "b": 4}' }]);
        expect(
          read(
            '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": ' +
              `4}}, {"name": "get_current_weather", "arguments":${WEATHER}}]`,
          ).calls,
        ).toEqual([
          { name: "add", arguments: '{"a": 3.5, "b": 4}' },
          { name: "get_current_weather", arguments: WEATHER },
        ]);
      },
    );

    it(
      'the arguments before the name, and a "name" inside the ' +
        "arguments that is not the call's (argument_before_name…)",
      () => {
        expect(
          read(`[TOOL_CALLS] [{"arguments":${WEATHER}, "name": "get_current_weather"}]`).calls,
        ).toEqual([{ name: "get_current_weather", arguments: WEATHER }]);
        expect(
          read('[TOOL_CALLS] [{"arguments":{"name": "John Doe"}, "name": "get_age"}]').calls,
        ).toEqual([{ name: "get_age", arguments: '{"name": "John Doe"}' }]);
      },
    );

    it(
      "content before the list; text after it dropped (content_before_tool, " +
        "trailing_data_after_json: vLLM's stream sends it)",
      () => {
        expect(read('Hello[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]')).toEqual({
          content: "Hello",
          calls: [{ name: "add", arguments: '{"a": 1, "b": 2}' }],
        });
        expect(
          read(
            '[TOOL_CALLS] [{"name": "get_current_weather", "arguments":{"city": ' +
              '"Dallas", "state": "TX", "unit": "fahrenheit"}}]\nextra trailing data',
          ),
        ).toEqual({
          content: "",
          calls: [
            {
              name: "get_current_weather",
              arguments: '{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}',
            },
          ],
        });
      },
    );
  });
});
