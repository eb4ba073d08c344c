// Workers AI's traditional function calling on /v1/run/{model}: its legacy `tools` or OpenAI's,
// read as chat reads them, each call answered in both shapes the binding's output joins.
import { z } from "@hono/zod-openapi";
import { ChatTool, FUNCTION_NAME, ToolChoice } from "../openai/tool-schemas";
import {
  CHAT_FIELDS,
  toolPlanOf,
  type ToolModel,
  type ToolPlan,
} from "../../tasks/text-generation/tool-plan";
import type { ToolCall } from "../../tasks/text-generation/tool-parsers";

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
  .openapi({
    description:
      "Workers AI function calling: {name, description, parameters} " +
      'or {type: "function", function}; the model chooses whether ' +
      "to call (a model whose manifest names a tool-call parser)",
  });

/**
 * The tools as the chat template takes them (OpenAI's shape), from the body as sent (numbers as
 * written).
 */
export function chatToolsOf(sent: readonly unknown[]): unknown[] {
  return sent.map((tool) =>
    tool !== null && typeof tool === "object" && "function" in tool
      ? tool
      : { type: "function", function: tool },
  );
}

/**
 * OpenAI's tool_choice, which Workers AI's newer models and workers-ai-provider send; without
 * it the model chooses, as Workers AI's traditional function calling has it.
 */
export const RunToolChoice = ToolChoice.optional().openapi({
  description:
    'With tools: "auto" (the default: the model chooses), "none", "required" (at ' +
    'least one call), or {"type": "function", "function": {"name"}} (that call)',
});

/**
 * How the request's tools are used (undefined: text alone), as chat's tool_choice: without one
 * the model chooses, its calls read by its parser (a model without one refuses tools: 400
 * naming them); a forced call needs no parser, the sampler writes it.
 * OpenAI's tool_choice is taken too: workers-ai-provider (Cloudflare's AI SDK provider) sends it.
 */
export function runToolPlan(
  body: { tools?: z.infer<typeof RunTools>; tool_choice?: z.infer<typeof RunToolChoice> },
  model: ToolModel,
): ToolPlan | undefined {
  const tools = body.tools ?? [];
  return toolPlanOf(
    { tools: chatToolsOf(tools) as z.infer<typeof ChatTool>[], tool_choice: body.tool_choice },
    model,
    {
      ...CHAT_FIELDS,
      parameters: (index) =>
        tools[index] !== undefined && "function" in tools[index]
          ? `tools.${index}.function.parameters`
          : `tools.${index}.parameters`,
      defaultChoice: "tools",
    },
  );
}

/**
 * A call in both of the binding's shapes; `arguments` the value (the JSON text when it is not whole
 * JSON, e.g. cut by max_tokens).
 *
 * Both shapes the binding's output type joins (AiTextGenerationToolLegacyOutput &
 * AiTextGenerationToolOutput): {name, arguments: <the value>} beside {id, type, function: {name,
 * arguments: <the JSON text>}}.
 */
export function runToolCall(call: ToolCall) {
  let value: unknown = call.function.arguments;
  try {
    value = JSON.parse(call.function.arguments) as unknown;
  } catch {
    // Not whole JSON: the text as written.
  }
  return {
    id: call.id,
    type: call.type,
    function: call.function,
    name: call.function.name,
    arguments: value,
  };
}
