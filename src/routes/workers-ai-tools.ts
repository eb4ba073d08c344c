// Workers AI's traditional function calling on /v1/run/{model}
// (developers.cloudflare.com/workers-ai/features/function-calling/traditional): `tools` in its
// legacy shape {name, description, parameters} or OpenAI's {type: "function", function}; the
// model chooses (there is no tool_choice), its calls read by the parser its manifest names, as
// chat's tool_choice "auto" reads them. Each call goes out in both shapes the binding's output
// type joins (workers-types AiTextGenerationOutput.tool_calls: AiTextGenerationToolLegacyOutput
// & AiTextGenerationToolOutput): {name, arguments: <the value>} beside {id, type, function:
// {name, arguments: <the JSON text>}}.
import { z } from "@hono/zod-openapi";
import { ServiceError } from "../errors/service-error";
import type { ToolCallParser } from "../models/manifest";
import { ChatTool, FUNCTION_NAME } from "./openai/tool-calls";
import type { ToolCall, ToolMode } from "./openai/tool-call-reader";

/** Workers AI's legacy tool: the function itself, with no {type, function} wrapper. */
const LegacyTool = z
  .object({
    name: FUNCTION_NAME,
    description: z.string().max(65_536).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const RunTools = z
  .array(z.union([ChatTool, LegacyTool]))
  .max(128)
  .optional()
  .openapi({ description: "Workers AI function calling: {name, description, parameters} or {type: \"function\", function}; the model chooses whether to call (a model whose manifest names a tool-call parser)" });

/** The tools as the chat template takes them (OpenAI's shape), from the body as sent (numbers as written). */
export function chatToolsOf(sent: readonly unknown[]): unknown[] {
  return sent.map((tool) => (tool !== null && typeof tool === "object" && "function" in tool ? tool : { type: "function", function: tool }));
}

/** How the model's calls are read: its parser's; a model without one refuses tools (400 naming them). */
export function runToolMode(model: { name: string; parser: ToolCallParser | undefined }): ToolMode {
  if (model.parser === undefined) {
    throw new ServiceError(400, "invalid_request", `tools need a parser for the model's own tool-call format, and model ${model.name} names none`, { field: "tools" });
  }
  return { kind: "auto", parser: model.parser };
}

/** A call in both of the binding's shapes; `arguments` the value (the JSON text when it is not whole JSON, e.g. cut by max_tokens). */
export function runToolCall(call: ToolCall) {
  let value: unknown = call.function.arguments;
  try {
    value = JSON.parse(call.function.arguments) as unknown;
  } catch {
    // Not whole JSON: the text as written.
  }
  return { id: call.id, type: call.type, function: call.function, name: call.function.name, arguments: value };
}
