// Chat messages as the chat template reads them: content flattened, tool call arguments parsed
// from their JSON text.
import type { z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import {
  parseLosslessJson,
  type ChatMessage,
  type LosslessJson,
  type TemplateValue,
} from "../../tokenizers/chat-template";
import type { ChatCompletionRequest, Content } from "./chat-request";
import type { AssistantToolCall } from "./tool-schemas";

/** Message content as vLLM flattens a list of text parts: joined with "\n". */
export function flattenContent(content: z.infer<typeof Content>): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

/**
 * Chat messages as the template reads them: content flat, `developer` as `system` (OpenAI's
 * newer name), an assistant turn's tool call arguments parsed from their JSON text (as vLLM's
 * chat_utils does for templates: an empty text is {}), numbers kept as written.
 */
/**
 * A conversation's identity for a canary's stickiness: its messages up to its first user turn,
 * which every later turn resends unchanged.
 */
export function conversationKey(messages: ChatCompletionRequest["messages"]): string {
  const first = messages.findIndex((message) => message.role === "user");
  return JSON.stringify(messages.slice(0, first < 0 ? 1 : first + 1));
}

export function chatMessages(messages: ChatCompletionRequest["messages"]): ChatMessage[] {
  return messages.map((message, at): ChatMessage => {
    if (message.role === "tool")
      return {
        role: "tool",
        content: flattenContent(message.content),
        tool_call_id: message.tool_call_id,
      };
    const role = message.role === "developer" ? "system" : message.role;
    if (message.role !== "assistant" || message.tool_calls === undefined)
      return { role, content: message.content == null ? null : flattenContent(message.content) };
    return {
      role,
      content: message.content == null ? null : flattenContent(message.content),
      tool_calls: templateToolCalls(message.tool_calls, at),
    };
  });
}

/**
 * An earlier assistant turn's tool calls (message `at`) as templates read them: each one's
 * arguments parsed.
 */
export function templateToolCalls(
  calls: readonly z.infer<typeof AssistantToolCall>[],
  at: number,
): TemplateValue[] {
  return calls.map((call, index) => ({
    id: call.id,
    type: "function",
    function: {
      name: call.function.name,
      arguments: templateArguments(
        call.function.arguments,
        `messages.${at}.tool_calls.${index}.function.arguments`,
      ),
    },
  }));
}

/**
 * An earlier call's arguments as templates read them: the JSON text parsed, numbers kept as
 * written; empty is {} (vLLM's chat_utils).
 */
export function templateArguments(text: string, field: string): LosslessJson {
  if (text.trim() === "") return {};
  try {
    return parseLosslessJson(text);
  } catch (error) {
    throw new ServiceError(
      400,
      "invalid_request",
      `${field}: not valid JSON (${(error as Error).message})`,
      { field },
    );
  }
}
