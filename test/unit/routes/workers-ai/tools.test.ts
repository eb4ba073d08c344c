// Workers AI's tool calls as /v1/run sends them: each call in both shapes the binding's output
// type joins (workers-types AiTextGenerationOutput.tool_calls: AiTextGenerationToolLegacyOutput
// & AiTextGenerationToolOutput), and the stream's events — the text before the calls as
// `{"response"}` deltas, the calls once whole.
import { describe, expect, it } from "vitest";
import { workersAiChunks } from "../../../../src/routes/workers-ai/run-chunks";
import type { ToolMode } from "../../../../src/tasks/text-generation/tool-parsers";
import { chatToolsOf, runToolCall } from "../../../../src/routes/workers-ai/tools";

const AUTO: ToolMode = { kind: "auto", parser: "hermes" };
const TEXT =
  'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';
const done = {
  type: "done" as const,
  finishReason: "stop" as const,
  stopReason: null,
  usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 },
};

describe("Workers AI tool calls", () => {
  it(
    "a call in both shapes: {name, arguments: value} beside " +
      "{id, type, function: {name, arguments: JSON text}}",
    () => {
      const call = {
        id: "chatcmpl-tool-1",
        type: "function" as const,
        function: { name: "get_weather", arguments: '{"city": "Paris"}' },
      };
      expect(runToolCall(call)).toEqual({
        ...call,
        name: "get_weather",
        arguments: { city: "Paris" },
      });
      // Cut by max_tokens: the text as written.
      expect(
        runToolCall({ ...call, function: { name: "f", arguments: '{"city": "Pa' } }).arguments,
      ).toBe('{"city": "Pa');
    },
  );

  it("legacy tools are wrapped as OpenAI's for the template; OpenAI's pass as they are", () => {
    const legacy = { name: "f", parameters: { type: "object" } };
    expect(chatToolsOf([legacy, { type: "function", function: legacy }])).toEqual([
      { type: "function", function: legacy },
      { type: "function", function: legacy },
    ]);
  });

  for (const size of [1, 4, 1000]) {
    it(
      `streamed in pieces of ${size}: the text as response ` +
        "deltas, then the calls once whole, then the usage",
      () => {
        const format = workersAiChunks({ mode: AUTO, call: runToolCall });
        const frames: unknown[] = [...format.opening(0)];
        for (let at = 0; at < TEXT.length; at += size)
          frames.push(...format.text({ type: "text", text: TEXT.slice(at, at + size) }, 0));
        frames.push(...format.done(done, 0), ...format.usage(done.usage));
        const parsed = frames.map((frame) =>
          typeof frame === "string"
            ? (JSON.parse(frame) as Record<string, unknown>)
            : (frame as Record<string, unknown>),
        );
        const calls = parsed.filter((frame) => frame.tool_calls !== undefined);
        expect(
          parsed
            .filter((frame) => frame.tool_calls === undefined && frame.usage === undefined)
            .map((frame) => frame.response)
            .join(""),
        ).toBe("Checking.\n");
        expect(calls).toEqual([
          {
            response: "",
            tool_calls: [
              {
                index: 0,
                id: expect.stringMatching(/^chatcmpl-tool-/),
                type: "function",
                function: { name: "get_weather", arguments: '{"city": "Paris"}' },
                name: "get_weather",
                arguments: { city: "Paris" },
              },
            ],
          },
        ]);
        expect(parsed.at(-1)).toEqual({ response: "", usage: done.usage });
      },
    );
  }
});
