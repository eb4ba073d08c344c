// Workers AI's text-generation stream on /v1/run: `data: {"response": "…"}` per delta, the tool
// calls once whole, the usage last.
import { toolReader, type ToolCall, type ToolMode } from "../../tasks/text-generation/tool-parsers";
import { jsonTemplate, type StreamFormat } from "../openai/generation-stream";

const responseChunk = jsonTemplate((response) => ({ response }));

/**
 * Workers AI's text-generation stream: `data: {"response": "…"}` per delta, the usage last.
 * With tools, the text before the calls as the deltas, and the calls once whole, in one
 * `{"response": "", "tool_calls": […]}` event before the usage (`call`: each one's shape).
 */
export function workersAiChunks(tools?: {
  mode: ToolMode;
  call: (call: ToolCall) => object;
}): StreamFormat {
  if (tools === undefined) {
    return {
      opening: () => [],
      text: ({ text }) => [responseChunk(text)],
      done: () => [],
      usage: (usage) => [{ response: "", usage }],
    };
  }
  const reader = toolReader(tools.mode);
  const content = (text: string) => (text === "" ? [] : [responseChunk(text)]);
  return {
    opening: () => [],
    text: ({ text }) => content(reader.push(text).content),
    // Each call with its index, as OpenAI's stream deltas have it: workers-ai-provider joins a
    // streamed call's pieces by index (a call without one is read as index 0).
    done: () => [
      ...content(reader.end().content),
      ...(reader.calls.length === 0
        ? []
        : [
            {
              response: "",
              tool_calls: reader.calls.map((call, index) => ({ index, ...tools.call(call) })),
            },
          ]),
    ],
    usage: (usage) => [{ response: "", usage }],
  };
}
