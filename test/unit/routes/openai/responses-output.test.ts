// The Responses API's items and stream events for tool_choice "auto": a message for the text
// before the calls, then a function_call item per call. The stream is read by the official
// `openai` SDK's own accumulator (openai-node src/lib/responses/ResponseStream.ts, through
// `responses.stream` over a fetch that returns our frames), so wrong output indexes, a delta for
// an item never added, or arguments that do not join up fail here as they would in a client.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { callId, eventWriter, OutputItems } from "../../../../src/routes/openai/responses-output";
import { toolReader } from "../../../../src/tasks/text-generation/tool-parsers";

const TEXT =
  'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": ' +
  '{"city": "Paris"}}\n</tool_call>\n<tool_call>{"name": ' +
  '"get_time", "arguments": {"zone": "CET"}}</tool_call>';

const response = (status: string, output: unknown[]) => ({
  id: "resp_1",
  object: "response",
  created_at: 1,
  status,
  error: null,
  incomplete_details: null,
  model: "tiny-llm",
  output,
  parallel_tool_calls: true,
  tool_choice: "auto",
  tools: [],
});

/**
 * The frames of one stream: `TEXT` pushed in pieces of `size` characters, the items closed, the
 * Response completed.
 */
function frames(size: number): { body: string; output: unknown[] } {
  const write = eventWriter();
  const items = new OutputItems(toolReader({ kind: "auto", parser: "hermes" }, callId), write);
  let body =
    write("response.created", { response: response("in_progress", []) }) +
    write("response.in_progress", { response: response("in_progress", []) });
  for (let at = 0; at < TEXT.length; at += size) body += items.read(TEXT.slice(at, at + size));
  body += items.read(undefined) + items.close("completed");
  const output = items.output("completed");
  // The Responses stream ends with response.completed: no [DONE] (that is chat's sentinel).
  body += write("response.completed", { response: response("completed", output) });
  return { body, output };
}

describe("Responses output items with tool_choice auto", () => {
  it("a message of the text before the calls, then one function_call item per call, whole", () => {
    const items = new OutputItems(toolReader({ kind: "auto", parser: "hermes" }, callId));
    expect(items.read(TEXT)).toBe("");
    items.read(undefined);
    const output = items.output("completed");
    expect(output).toMatchObject([
      {
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Let me look.\n", annotations: [], logprobs: [] }],
      },
      {
        type: "function_call",
        status: "completed",
        name: "get_weather",
        arguments: '{"city": "Paris"}',
      },
      {
        type: "function_call",
        status: "completed",
        name: "get_time",
        arguments: '{"zone": "CET"}',
      },
    ]);
    expect(output[0]!.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(
      output
        .slice(1)
        .map((item) => [
          item.id.slice(0, 3),
          item.type === "function_call" ? item.call_id.slice(0, 5) : "",
        ]),
    ).toEqual([
      ["fc_", "call_"],
      ["fc_", "call_"],
    ]);
  });

  for (const size of [1, 3, 7, 1000]) {
    it(
      `streamed in pieces of ${size}: the openai SDK's ` +
        "accumulator builds the same items from the events",
      async () => {
        const { body, output } = frames(size);
        const client = new OpenAI({
          apiKey: "k",
          baseURL: "https://edge.test/v1",
          maxRetries: 0,
          fetch: async () =>
            new Response(body, { headers: { "content-type": "text/event-stream" } }),
        });
        const stream = client.responses.stream({ model: "tiny-llm", input: "Weather?" });
        const types: string[] = [];
        let text = "";
        const args: Record<number, string> = {};
        for await (const event of stream) {
          types.push(event.type);
          if (event.type === "response.output_text.delta") text += event.delta;
          if (event.type === "response.function_call_arguments.delta")
            args[event.output_index] = (args[event.output_index] ?? "") + event.delta;
        }
        const final = await stream.finalResponse();
        // The SDK parses what it finalizes (parsed_arguments: null beside each call).
        expect(final.output).toMatchObject(output);
        expect(text).toBe("Let me look.\n");
        expect(args).toEqual({ 1: '{"city": "Paris"}', 2: '{"zone": "CET"}' });
        expect(types.filter((type) => !type.endsWith(".delta"))).toEqual([
          "response.created",
          "response.in_progress",
          "response.output_item.added",
          "response.content_part.added",
          "response.output_text.done",
          "response.content_part.done",
          "response.output_item.done",
          "response.output_item.added",
          "response.function_call_arguments.done",
          "response.output_item.done",
          "response.output_item.added",
          "response.function_call_arguments.done",
          "response.output_item.done",
          "response.completed",
        ]);
      },
    );
  }
});
