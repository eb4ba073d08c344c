// tool_choice "auto" for Hermes-format models: the text before <tool_call> is content, each
// call's name then arguments stream as written, and however the text is cut into deltas the
// joined result equals the whole text's. The model outputs and what they must give are vLLM's
// own (vllm-project/vllm: tests/tool_parsers/test_hermes_tool_parser.py, pinned to
// vllm/tool_parsers/hermes_tool_parser.py).
import { describe, expect, it } from "vitest";
import { partialTagOverlap } from "../../../../../src/tasks/text-generation/tool-parsers/region-reader";
import {
  readToolText,
  toolReader,
  type ToolMode,
} from "../../../../../src/tasks/text-generation/tool-parsers";
import { streamedReading, type Joined } from "../../../../support/tool-reading";

const AUTO: ToolMode = { kind: "auto", parser: "hermes" };

const streamed = (text: string, cuts: readonly number[]) => streamedReading(AUTO, text, cuts);

/** The whole text read at once, as the non-streamed response reads it. */
function whole(text: string): Joined {
  const { content, calls } = readToolText(text, AUTO);
  return {
    content,
    calls: calls.map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    })),
  };
}

/**
 * Every way of cutting: one character at a time, every stream interval up to 8, and seeded random
 * cuts.
 */
function expectSameAnyCut(text: string): Joined {
  const expected = whole(text);
  const withoutIds = (joined: Joined) => ({
    content: joined.content,
    calls: joined.calls.map(({ name, arguments: args }) => ({ name, arguments: args })),
  });
  const positions = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
  for (let interval = 1; interval <= 8; interval += 1) {
    expect(
      withoutIds(
        streamed(
          text,
          positions.filter((p) => p % interval === 0),
        ),
      ),
      `interval ${interval}`,
    ).toEqual(withoutIds(expected));
  }
  let seed = 11;
  for (let round = 0; round < 100; round += 1) {
    const cuts = positions.filter(
      () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 4 === 0),
    );
    expect(withoutIds(streamed(text, cuts))).toEqual(withoutIds(expected));
  }
  return expected;
}

describe("Hermes tool-call reader (tool_choice auto)", () => {
  it(
    "plain text is all content, a lone '<' held back only until it cannot " +
      "start the tag (test_hermes_parser_streaming_just_forward_text)",
    () => {
      const text = "This is some prior text that has nothing to do with tool calling.";
      expect(expectSameAnyCut(text)).toEqual({ content: text, calls: [] });
      expect(expectSameAnyCut("a < b and <tool but no call")).toEqual({
        content: "a < b and <tool but no call",
        calls: [],
      });
      const reader = toolReader(AUTO);
      expect(reader.push("x <tool_")).toEqual({ content: "x ", calls: [] });
      expect(reader.push("c")).toEqual({ content: "", calls: [] });
      expect(reader.end()).toEqual({ content: "<tool_c", calls: [] });
    },
  );

  it(
    "a call between tags: the name, then the arguments as written " +
      "(test_hermes_parser_non_streaming_tool_call_between_tags)",
    () => {
      const result = expectSameAnyCut(
        '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>',
      );
      expect(result.content).toBe("");
      expect(result.calls).toEqual([
        {
          id: expect.stringMatching(/^chatcmpl-tool-[0-9a-f]{32}$/),
          name: "final_answer",
          arguments: '{"trigger": true}',
        },
      ]);
    },
  );

  it(
    "content, then a call " + "(test_hermes_streaming_content_then_tool_call_with_stream_interval)",
    () => {
      const result = expectSameAnyCut(
        'Sure, let me check the weather.<tool_call>{"name": ' +
          '"get_weather", "arguments": {"city": "NYC"}}</tool_call>',
      );
      expect(result.content).toBe("Sure, let me check the weather.");
      expect(result.calls.map(({ name, arguments: args }) => [name, JSON.parse(args)])).toEqual([
        ["get_weather", { city: "NYC" }],
      ]);
    },
  );

  it(
    "the arguments split over lines, and braces and " +
      "quotes inside strings (test_hermes_parser_streaming)",
    () => {
      const text =
        '<tool_call>{"name": "get_current_temperature",\n"arguments": ' +
        '{"location":\n"San Francisco, California, United States", ' +
        '"unit": "celsius", "note": "a } and a \\" and {"}}\n</tool_call>';
      const result = expectSameAnyCut(text);
      expect(JSON.parse(result.calls[0]!.arguments)).toEqual({
        location: "San Francisco, California, United States",
        unit: "celsius",
        note: 'a } and a " and {',
      });
    },
  );

  it(
    "several calls, each its own id; text between and after them dropped, as vLLM " +
      "drops it (test_hermes_streaming_multiple_tool_calls_with_stream_interval)",
    () => {
      const text =
        'Searching.\n<tool_call>{"name": "search", "arguments": ' +
        '{"q": "cats"}}</tool_call>\n<tool_call>{"name": ' +
        '"search", "arguments": {"q": "dogs"}}</tool_call>\nDone.';
      const result = expectSameAnyCut(text);
      expect(result.content).toBe("Searching.\n");
      expect(result.calls.map(({ name, arguments: args }) => [name, args])).toEqual([
        ["search", '{"q": "cats"}'],
        ["search", '{"q": "dogs"}'],
      ]);
      expect(result.calls[0]!.id).not.toBe(result.calls[1]!.id);
    },
  );

  it(
    "a call cut off by the end of generation: the arguments as far as " +
      "written (test_hermes_parser_non_streaming_tool_call_until_eos)",
    () => {
      expect(
        expectSameAnyCut(
          '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}',
        ).calls.map((call) => call.arguments),
      ).toEqual(['{"trigger": true}']);
      expect(
        expectSameAnyCut('<tool_call>{"name": "f", "arguments": {"q": "ab').calls.map(
          (call) => call.arguments,
        ),
      ).toEqual(['{"q": "ab']);
    },
  );

  it(
    "arguments written as serialized JSON pass through once decoded; a bare string stays " +
      "JSON (test_hermes_parser_non_streaming_serialized_arguments, …bare_string_arguments)",
    () => {
      const serialized = expectSameAnyCut(
        '<tool_call>\n{"name": "get_db_config", "arguments": ' +
          '"{\\"param\\": \\"max_connections\\"}"}\n</tool_call>',
      );
      expect(JSON.parse(serialized.calls[0]!.arguments)).toEqual({ param: "max_connections" });
      const bare = expectSameAnyCut(
        '<tool_call>\n{"name": "do_thing", "arguments": "hello"}\n</tool_call>',
      );
      expect(JSON.parse(bare.calls[0]!.arguments)).toBe("hello");
    },
  );

  it(
    'the call\'s own keys only: arguments before the name, a "name" ' +
      "inside them, a serialized string argument before the name",
    () => {
      expect(
        expectSameAnyCut(
          '<tool_call>{"arguments": {"name": "John Doe", "x": ' +
            '[1, {"name": "n"}]}, "name": "get_age"}</tool_call>',
        ).calls.map((call) => [call.name, call.arguments]),
      ).toEqual([["get_age", '{"name": "John Doe", "x": [1, {"name": "n"}]}']]);
      expect(
        JSON.parse(
          expectSameAnyCut('<tool_call>{"arguments": "{\\"a\\": 1}", "name": "f"}</tool_call>')
            .calls[0]!.arguments,
        ),
      ).toEqual({ a: 1 });
    },
  );

  it(
    "a call with no arguments has {}; a region " + "with no name stays in the content as written",
    () => {
      expect(
        expectSameAnyCut('<tool_call>{"name": "now"}</tool_call>').calls.map(
          (call) => call.arguments,
        ),
      ).toEqual(["{}"]);
      expect(expectSameAnyCut("Hi <tool_call>not json</tool_call>")).toEqual({
        content: "Hi <tool_call>not json</tool_call>",
        calls: [],
      });
      expect(expectSameAnyCut("<tool_call>not json")).toEqual({
        content: "<tool_call>not json",
        calls: [],
      });
    },
  );

  it(
    "the name goes out as soon as it is written, the " +
      "arguments as they come, never a partial </tool_call>",
    () => {
      const reader = toolReader(AUTO);
      expect(reader.push('<tool_call>{"name": "get_wea')).toEqual({ content: "", calls: [] });
      const named = reader.push('ther", "arguments": {"ci');
      // Consecutive deltas of one call are merged, as the forced reader merges them.
      expect(named.calls).toEqual([
        {
          index: 0,
          id: reader.calls[0]!.id,
          type: "function",
          function: { name: "get_weather", arguments: '{"ci' },
        },
      ]);
      expect(reader.push('ty": "Paris"}}</tool_')).toEqual({
        content: "",
        calls: [{ index: 0, function: { arguments: 'ty": "Paris"}' } }],
      });
      expect(reader.push("call>")).toEqual({ content: "", calls: [] });
      expect(reader.end()).toEqual({ content: "", calls: [] });
    },
  );

  it("partialTagOverlap: the longest suffix that begins the tag", () => {
    expect(partialTagOverlap("abc<tool_c", "<tool_call>")).toBe(7);
    expect(partialTagOverlap("abc<", "<tool_call>")).toBe(1);
    expect(partialTagOverlap("abc", "<tool_call>")).toBe(0);
    expect(partialTagOverlap("<tool_call>", "<tool_call>")).toBe(0);
  });
});
