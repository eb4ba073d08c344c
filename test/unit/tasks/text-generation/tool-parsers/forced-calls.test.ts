// The reader that turns a forced call's generated text into OpenAI's tool calls: the same
// calls however the text is split into deltas, each call's arguments the exact text written.
import { describe, expect, it } from "vitest";
import {
  toolCallsIn,
  type ForcedToolMode,
  type ToolCallDelta,
} from "../../../../../src/tasks/text-generation/tool-parsers";
import { ToolCallReader } from "../../../../../src/tasks/text-generation/tool-parsers/forced-calls";

/** The text pushed in pieces at the given cut points: the deltas joined per call. */
function joined(
  text: string,
  mode: ForcedToolMode,
  cuts: readonly number[],
): { name?: string; arguments: string }[] {
  const reader = new ToolCallReader(mode);
  const deltas: ToolCallDelta[] = [];
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    deltas.push(...reader.push(text.slice(at, cut)));
    at = cut;
  }
  const calls: { name?: string; arguments: string }[] = [];
  for (const delta of deltas) {
    if (delta.id !== undefined) calls[delta.index] = { name: delta.function.name, arguments: "" };
    calls[delta.index]!.arguments += delta.function.arguments;
  }
  return calls;
}

const REQUIRED: ForcedToolMode = { kind: "required" };

describe("ToolCallReader", () => {
  it(
    '"required": each call named, its arguments the ' +
      "exact text (nested, escaped, braces in strings)",
    () => {
      const text =
        '[{"name":"a","parameters":{"q":"}]\\"{","n":[1,' +
        '{"x":{}}]}},{"name":"b-2","parameters":{}}]';
      const calls = toolCallsIn(text, REQUIRED);
      expect(calls.map((call) => call.function)).toEqual([
        { name: "a", arguments: '{"q":"}]\\"{","n":[1,{"x":{}}]}' },
        { name: "b-2", arguments: "{}" },
      ]);
      expect(
        calls.every(
          (call) => call.type === "function" && /^chatcmpl-tool-[0-9a-f]{32}$/.test(call.id),
        ),
      ).toBe(true);
      expect(calls[0]!.id).not.toBe(calls[1]!.id);
    },
  );

  it("the same calls however the text is cut, down to one character at a time", () => {
    const text =
      '[{"name":"get_weather","parameters":{"city":"Zürich ' +
      '☃","unit":"celsius"}},{"name":"t","parameters":{"zone":"\\\\"}}]';
    const whole = toolCallsIn(text, REQUIRED).map((call) => ({
      name: call.function.name,
      arguments: call.function.arguments,
    }));
    const every = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
    expect(joined(text, REQUIRED, every)).toEqual(whole);
    let seed = 7;
    for (let round = 0; round < 200; round += 1) {
      const cuts = every.filter(
        () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 5 === 0),
      );
      expect(joined(text, REQUIRED, cuts)).toEqual(whole);
    }
  });

  it(
    "whitespace between the list's tokens (a backend that " +
      "writes it) is skipped; inside the arguments it is kept",
    () => {
      const text =
        ' [ { "name" : "a" , "parameters" : { "x" : 1 } } ,\n{"name":"b","parameters":7} ] ';
      expect(toolCallsIn(text, REQUIRED).map((call) => call.function)).toEqual([
        { name: "a", arguments: '{ "x" : 1 }' },
        { name: "b", arguments: "7" },
      ]);
    },
  );

  it("an unfinished list: the calls so far, the last one's arguments as far as written", () => {
    expect(
      toolCallsIn('[{"name":"a","parameters":{"x":"ab', REQUIRED).map((call) => call.function),
    ).toEqual([{ name: "a", arguments: '{"x":"ab' }]);
    expect(toolCallsIn('[{"name":"a', REQUIRED)).toEqual([]);
  });

  it("text that leaves the list's form ends the reading: no call is made up", () => {
    expect(toolCallsIn('{"name":"a","parameters":{}}', REQUIRED)).toEqual([]);
    expect(toolCallsIn('[{"parameters":{},"name":"a"}]', REQUIRED)).toEqual([]);
    expect(
      toolCallsIn('[{"name":"a","parameters":{}}x{"name":"b","parameters":{}}]', REQUIRED).map(
        (call) => call.function.name,
      ),
    ).toEqual(["a"]);
  });

  it(
    "a named function: one call, the whole text its " +
      "arguments; its first delta carries id and name",
    () => {
      const reader = new ToolCallReader({ kind: "named", name: "f" });
      const first = reader.push('{"a"');
      expect(first).toEqual([
        {
          index: 0,
          id: reader.calls[0]!.id,
          type: "function",
          function: { name: "f", arguments: '{"a"' },
        },
      ]);
      expect(reader.push("")).toEqual([]);
      expect(reader.push(":1}")).toEqual([{ index: 0, function: { arguments: ":1}" } }]);
      expect(reader.calls.map((call) => call.function)).toEqual([
        { name: "f", arguments: '{"a":1}' },
      ]);
    },
  );
});
