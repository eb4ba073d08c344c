// The zod schemas of POST /v1/run/{model}: the Workers AI binding's inputs for classification and
// text generation, and its outputs.
import { z } from "@hono/zod-openapi";
import { ImageBytes } from "../classify/image-input";
import { LabelScoreSchema, Text } from "../classify/schemas";
import { UsageSchema } from "../openai/responses";
import { AssistantToolCall } from "../openai/tool-schemas";
import { RunToolChoice, RunTools } from "./tools";

export const ClassificationInput = z
  .object({ text: Text })
  .strict()
  .openapi("TextClassificationInput");
export const ImageClassificationInput = z
  .object({ image: ImageBytes })
  .strict()
  .openapi("ImageClassificationInput");

// Workers AI's RoleScopedChatInput: a tool's result comes back as {role: "tool", name, content};
// an assistant turn may carry the calls it made in OpenAI's shape, as Cloudflare's AI SDK
// provider (workers-ai-provider) writes them.
export const Message = z
  .object({
    role: z.enum(["system", "user", "assistant", "tool"]),
    content: z.string(),
    name: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "With role tool: the function whose result this is" }),
    tool_call_id: z.string().min(1).max(256).optional().openapi({
      description:
        "With role tool: the call whose result this is (OpenAI's), else its name stands for it",
    }),
    tool_calls: z
      .array(AssistantToolCall)
      .min(1)
      .max(128)
      .optional()
      .openapi({
        description:
          "With role assistant: the calls that turn made, {id, type, function: {name, arguments: " +
          "<JSON text>}}",
      }),
  })
  .strict()
  .refine((message) => message.tool_calls === undefined || message.role === "assistant", {
    message: "only an assistant message carries tool_calls",
    path: ["tool_calls"],
  });

export const GenerationInput = z
  .object({
    prompt: z.string().min(1).max(1_000_000).optional(),
    messages: z.array(Message).min(1).max(256).optional(),
    // As the binding: a prompt is sent as one user message through the chat template, unless raw.
    raw: z.boolean().optional().openapi({
      description: "With prompt: true sends it as it is, with no chat template (Workers AI's raw)",
    }),
    stream: z.boolean().optional(),
    // Workers AI's defaults: 256 tokens, temperature 0.6.
    max_tokens: z.number().int().min(1).max(1_000_000).optional(),
    temperature: z.number().min(0).max(5).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    top_k: z.number().int().min(1).max(50).optional(),
    seed: z.number().int().min(1).max(9_999_999_999).optional(),
    // Workers AI's ranges; applied as the OpenAI routes apply them.
    repetition_penalty: z.number().gt(0).max(2).optional(),
    frequency_penalty: z.number().min(-2).max(2).optional(),
    presence_penalty: z.number().min(-2).max(2).optional(),
    // Workers AI's JSON Mode (developers.cloudflare.com/workers-ai/json-mode): the schema itself
    // under json_schema; the response is the parsed value; not streamed.
    response_format: z
      .discriminatedUnion("type", [
        z.object({ type: z.literal("json_object") }).strict(),
        z
          .object({
            type: z.literal("json_schema"),
            json_schema: z.union([z.record(z.string(), z.unknown()), z.boolean()]),
          })
          .strict(),
      ])
      .optional()
      .openapi({
        description:
          'Workers AI JSON Mode: {"type": "json_object"} or {"type": "json_schema", ' +
          '"json_schema": <a JSON Schema>}; the response is the parsed value',
      }),
    tools: RunTools,
    tool_choice: RunToolChoice,
  })
  .strict()
  .openapi("TextGenerationInput");
export type GenerationInput = z.infer<typeof GenerationInput>;

/** What the route answers as JSON: the labels, or the generated response and its usage. */
export const RunOutput = z.union([
  z.array(LabelScoreSchema),
  z.object({
    response: z.unknown().openapi({
      description:
        "The text (with tools, the text before the calls); with response_format, the parsed " +
        "JSON value",
    }),
    tool_calls: z
      .array(
        z.object({
          id: z.string(),
          type: z.literal("function"),
          function: z.object({ name: z.string(), arguments: z.string() }),
          name: z.string(),
          arguments: z.unknown(),
        }),
      )
      .optional()
      .openapi({
        description:
          "With tools, the calls the model made: {name, arguments: <value>} beside OpenAI's " +
          "{id, type, function: {name, arguments: <JSON text>}}",
      }),
    usage: UsageSchema,
  }),
]);
