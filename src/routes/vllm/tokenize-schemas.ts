// Request and response shapes of /tokenize and /detokenize, as vLLM defines them.
import { z } from "@hono/zod-openapi";
import { integerList } from "../http/integer-list";

const Model = z.string().min(1).openapi({ example: "spam-classifier" });

const TextPart = z
  .object({ type: z.literal("text"), text: z.string() })
  .strict()
  .openapi("ChatTextPart");

const ToolCall = z
  .object({
    id: z.string().optional(),
    type: z.literal("function"),
    function: z
      .object({
        name: z.string().min(1),
        arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
      })
      .strict(),
  })
  .strict();

export const ChatMessage = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant", "tool"]),
    content: z
      .union([z.string(), z.array(TextPart), z.null()])
      .optional()
      .openapi({ description: 'A string, or text parts (joined with "\\n" as vLLM does)' }),
    name: z.string().optional(),
    tool_calls: z.array(ToolCall).optional(),
    tool_call_id: z.string().optional(),
    reasoning_content: z.string().optional(),
  })
  .strict()
  .openapi("ChatMessage");

const Tool = z
  .object({
    type: z.literal("function"),
    function: z
      .object({
        name: z.string().min(1),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().optional(),
      })
      .strict(),
  })
  .strict()
  .openapi("ChatTool");

export const TokenizeCompletionRequest = z
  .object({
    model: Model,
    prompt: z.string().openapi({ example: "Win a free cruise!" }),
    add_special_tokens: z
      .boolean()
      .default(true)
      .openapi({ description: "Add BOS/EOS as the tokenizer's post-processor says" }),
  })
  .strict()
  .openapi("TokenizeCompletionRequest");

export const TokenizeChatRequest = z
  .object({
    model: Model,
    messages: z.array(ChatMessage).min(1, "needs at least one message"),
    add_generation_prompt: z.boolean().default(true),
    add_special_tokens: z
      .boolean()
      .default(false)
      .openapi({ description: "Add BOS/EOS on top of what the chat template emits" }),
    tools: z.array(Tool).optional().openapi({
      description:
        "Tool schemas for templates that take them; numbers kept as written (1.0 stays 1.0)",
    }),
    chat_template_kwargs: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "Further template variables, e.g. enable_thinking" }),
  })
  .strict()
  .openapi("TokenizeChatRequest");

export const TokenizeRequest = z
  .union([TokenizeCompletionRequest, TokenizeChatRequest])
  .openapi("TokenizeRequest");

export const TokenizeResponse = z
  .object({
    count: z.number().int(),
    max_model_len: z.number().int(),
    tokens: z.array(z.number().int()),
  })
  .openapi("TokenizeResponse");

export const DetokenizeRequest = z
  .object({ model: Model, tokens: integerList(0, Infinity).openapi({ example: [1, 2, 3] }) })
  .strict()
  .openapi("DetokenizeRequest");

export const DetokenizeResponse = z.object({ prompt: z.string() }).openapi("DetokenizeResponse");
