// Function calling's request fields on chat completions, as OpenAI and vLLM define them: the
// tools, tool_choice, parallel_tool_calls, and an earlier assistant turn's calls. What the task
// makes of them is tasks/text-generation/tool-plan.ts.
import { z } from "@hono/zod-openapi";

/** OpenAI's limit on tools per request. */
const MAX_TOOLS = 128;
export const FUNCTION_NAME = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,64}$/, "1–64 letters, digits, underscores or dashes");

export const FunctionDefinition = z
  .object({
    name: FUNCTION_NAME,
    description: z.string().max(65_536).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish().openapi({
      description:
        "A JSON Schema of the arguments (the structured-outputs subset); none: any object",
    }),
    strict: z.boolean().nullish(),
  })
  .strict();

export const ChatTool = z
  .object({ type: z.literal("function"), function: FunctionDefinition })
  .strict()
  .openapi("ChatCompletionTool");

export const ToolChoice = z
  .union([
    z.enum(["none", "auto", "required"]),
    z
      .object({ type: z.literal("function"), function: z.object({ name: FUNCTION_NAME }).strict() })
      .strict(),
  ])
  .nullish()
  .openapi({
    description:
      '"none": text; "required": one or more calls of the tools; {"type": ' +
      '"function", "function": {"name"}}: that function — both enforced token by ' +
      'token as JSON; "auto" (the default with tools): the model chooses, its ' +
      "calls read by the parser its manifest names (a model without one: 400)",
  });

export const toolFields = {
  tools: z
    .array(ChatTool)
    .max(MAX_TOOLS)
    .nullish()
    .openapi({ description: `Up to ${MAX_TOOLS} functions; they reach the chat template as sent` }),
  tool_choice: ToolChoice,
  parallel_tool_calls: z
    .boolean()
    .nullish()
    .openapi({ description: 'With tool_choice "required": false allows one call only' }),
};

/** A tool call of an earlier assistant turn: its arguments are the JSON text the model wrote. */
export const AssistantToolCall = z
  .object({
    id: z.string().max(256),
    type: z.literal("function"),
    function: z
      .object({ name: z.string().min(1).max(64), arguments: z.string().max(1_000_000) })
      .strict(),
  })
  .strict();
