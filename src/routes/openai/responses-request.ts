// OpenAI's Responses API request (POST /v1/responses), text in and out: every field honoured,
// accepted at its neutral value, or refused with a 400 naming it. Nothing is stored, so nothing can
// be retrieved or continued.
import { z } from "@hono/zod-openapi";
import type { ChatMessage } from "../../tokenizers/chat-template";
import { MAX_LOGPROBS } from "../../generation/logprobs";
import { neutral, refused } from "./field-policies";
import { templateArguments } from "./chat-messages";
import { TextFormat } from "./structured-fields";
import type { ToolFieldNames } from "../../tasks/text-generation/tool-plan";
import { FUNCTION_NAME, FunctionDefinition, type ChatTool, type ToolChoice } from "./tool-schemas";
import type { LosslessJson } from "../../tokenizers/chat-template";
import { losslessBody } from "../http/lossless-body";

const InputText = z.object({ type: z.literal("input_text"), text: z.string() }).strict();
const OutputText = z
  .object({
    type: z.literal("output_text"),
    text: z.string(),
    annotations: z.array(z.unknown()).max(0).optional(),
  })
  .strict();

/** An input message (EasyInputMessage or a message item): its role, and text or text parts. */
const inputMessage = <R extends "user" | "system" | "developer">(role: R) =>
  z
    .object({
      type: z.literal("message").optional(),
      role: z.literal(role),
      content: z.union([z.string(), z.array(InputText).min(1)]),
    })
    .strict();
const InputMessage = z.discriminatedUnion("role", [
  inputMessage("user"),
  inputMessage("system"),
  inputMessage("developer"),
  z
    .object({
      type: z.literal("message").optional(),
      role: z.literal("assistant"),
      content: z.union([z.string(), z.array(OutputText).min(1)]),
      id: z.string().optional(),
      status: z.string().optional(),
    })
    .strict(),
]);

/** The Responses API's function tool: the chat tool's fields, flat (openai-node FunctionTool). */
export const FunctionTool = z
  .object({ type: z.literal("function"), ...FunctionDefinition.shape })
  .strict()
  .openapi("FunctionTool");

export const ResponsesToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), name: FUNCTION_NAME }).strict(),
]);

/**
 * An earlier call, and its output, as input items (openai-node ResponseFunctionToolCall,
 * ResponseInputItem.FunctionCallOutput).
 */
const FunctionCallItem = z
  .object({
    type: z.literal("function_call"),
    call_id: z.string().max(256),
    name: z.string().min(1).max(64),
    arguments: z.string().max(1_000_000),
    id: z.string().max(256).optional(),
    status: z.string().optional(),
  })
  .strict();
const FunctionCallOutputItem = z
  .object({
    type: z.literal("function_call_output"),
    call_id: z.string().max(256),
    output: z.string().max(1_000_000),
    id: z.string().max(256).optional(),
    status: z.string().optional(),
  })
  .strict();
const InputItem = z.union([InputMessage, FunctionCallItem, FunctionCallOutputItem]);

export const ResponsesRequest = z
  .object({
    model: z.string().min(1).openapi({ example: "tiny-llm" }),
    input: z
      .union([
        z.string().min(1, "must not be empty"),
        z.array(InputItem).min(1, "needs at least one message").max(256),
      ])
      .openapi({
        description:
          "A user message's text, or a list of items: messages (user, system, developer, " +
          "assistant) with text content, function_call and function_call_output",
      }),
    instructions: z
      .string()
      .nullish()
      .openapi({ description: "A system message before the input" }),
    max_output_tokens: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .nullish()
      .openapi({ description: "Most tokens to generate (default: what the context leaves)" }),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .nullish()
      .openapi({ description: "0 = greedy (ties: lowest id)" }),
    top_p: z.number().gt(0).max(1).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z
      .object({ include_obfuscation: neutral(z.literal(false), "false") })
      .strict()
      .nullish(),
    user: z.string().max(256).nullish(),
    safety_identifier: z.string().max(128).nullish(),
    prompt_cache_key: z.string().max(1024).nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((metadata) => Object.keys(metadata).length <= 16, "at most 16 keys")
      .nullish()
      .openapi({ description: "Up to 16 key-value pairs, returned on the response" }),
    store: neutral(z.literal(false), "false (responses are not stored)"),
    tools: z.array(FunctionTool).max(128).nullish().openapi({
      description: "Up to 128 function tools; they reach the chat template as chat tools",
    }),
    tool_choice: ResponsesToolChoice.nullish().openapi({
      description:
        '"none": text; "required" or {"type": "function", "name"}: function_call output ' +
        'items, enforced token by token as JSON; "auto" (the default with tools): the model ' +
        "chooses, its calls read by the parser its manifest names (a model without one: 400)",
    }),
    parallel_tool_calls: z
      .boolean()
      .nullish()
      .openapi({ description: 'With tool_choice "required": false allows one call only' }),
    text: z
      .object({ format: TextFormat, verbosity: neutral(z.literal("medium"), '"medium"') })
      .strict()
      .nullish(),
    truncation: neutral(z.literal("disabled"), '"disabled"'),
    service_tier: neutral(z.enum(["auto", "default"]), '"auto"'),
    background: neutral(z.literal(false), "false"),
    include: z
      .array(
        z.literal("message.output_text.logprobs", {
          error: 'only "message.output_text.logprobs" is supported by this service',
        }),
      )
      .max(1)
      .nullish()
      .openapi({
        description:
          '"message.output_text.logprobs": each output token\'s logprob ' +
          "(and top_logprobs alternatives) on the text part and its deltas",
      }),
    previous_response_id: refused("previous_response_id"),
    conversation: refused("conversation"),
    reasoning: refused("reasoning"),
    prompt: refused("prompt"),
    top_logprobs: z
      .number()
      .int()
      .min(0)
      .max(MAX_LOGPROBS)
      .nullish()
      .openapi({
        description:
          "With include message.output_text.logprobs: this many " +
          `likeliest tokens at each position (0–${MAX_LOGPROBS})`,
      }),
    max_tool_calls: refused("max_tool_calls"),
    prompt_cache_retention: neutral(z.literal("in_memory"), '"in_memory"'),
  })
  .strict()
  .openapi("ResponsesRequest");
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

const textOf = (content: string | ReadonlyArray<{ text: string }>) =>
  typeof content === "string" ? content : content.map((part) => part.text).join("\n");

/**
 * The chat the model is given: the instructions as a system message, then the input's items —
 * messages; a run of function_call items as one assistant message with those tool calls; each
 * function_call_output as a tool message.
 */
export function responsesChat(body: ResponsesRequest): ChatMessage[] {
  const instructions: ChatMessage[] =
    body.instructions == null ? [] : [{ role: "system", content: body.instructions }];
  if (typeof body.input === "string")
    return [...instructions, { role: "user", content: body.input }];
  const messages: ChatMessage[] = [...instructions];
  let calls: ChatMessage[] | undefined;
  body.input.forEach((item, at) => {
    if ("role" in item) {
      calls = undefined;
      messages.push({
        role: item.role === "developer" ? "system" : item.role,
        content: textOf(item.content),
      });
    } else if (item.type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function",
        function: {
          name: item.name,
          arguments: templateArguments(item.arguments, `input.${at}.arguments`),
        },
      };
      if (calls === undefined) {
        calls = [];
        messages.push({ role: "assistant", content: null, tool_calls: calls });
      }
      calls.push(call);
    } else {
      calls = undefined;
      messages.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
    }
  });
  return messages;
}

/** The Responses API's tools and tool choice as chat's, for the shared tool plan. */
export function chatToolsOf(body: ResponsesRequest): {
  tools?: z.infer<typeof ChatTool>[];
  tool_choice?: z.infer<typeof ToolChoice>;
} {
  const tools = body.tools?.map(({ type, ...fn }) => ({ type, function: fn }));
  const choice = body.tool_choice;
  const tool_choice =
    choice == null || typeof choice === "string"
      ? choice
      : { type: "function" as const, function: { name: choice.name } };
  return {
    ...(tools === undefined ? {} : { tools }),
    ...(tool_choice === undefined ? {} : { tool_choice }),
  };
}

/**
 * How many alternatives each output token's logprobs list, when the request includes them
 * (undefined: none).
 */
export function responsesLogprobs(body: ResponsesRequest): number | undefined {
  return body.include?.includes("message.output_text.logprobs")
    ? (body.top_logprobs ?? 0)
    : undefined;
}

/**
 * Where the Responses API puts a tool's parameters and the named choice's name: flat, not under
 * `function`.
 */
export const RESPONSES_FIELDS: ToolFieldNames = {
  parameters: (index) => `tools.${index}.parameters`,
  choiceName: "tool_choice.name",
  namedChoice: '{"type": "function", "name": …}',
  defaultChoice: "tool_choice",
};

/**
 * The request's tools as the chat template reads them: chat's {type, function} form, numbers kept
 * as written.
 */
export async function templateTools(request: { text(): Promise<string> }): Promise<LosslessJson[]> {
  const tools = (await losslessBody(request)).tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => {
    if (typeof tool !== "object" || tool === null || Array.isArray(tool) || !("type" in tool))
      return tool;
    const { type, ...fn } = tool as { [key: string]: LosslessJson };
    return { type: type!, function: fn };
  });
}
