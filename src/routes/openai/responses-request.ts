// OpenAI's Responses API request (POST /v1/responses), text in and text out: what the openai
// SDK's `client.responses.create` / `.stream` send (openai-node src/resources/responses/
// responses.ts ResponseCreateParamsBase), and what vLLM serves of it (vllm-project/vllm
// vllm/entrypoints/openai/protocol.py ResponsesRequest). As on the chat route, every field is
// honoured, accepted at its neutral value, or refused with a 400 naming it; unknown fields
// are refused too. No response is stored: there is nothing to retrieve or continue from.
import { z } from "@hono/zod-openapi";
import type { ChatMessage } from "../../tokenizers/chat-template";
import { MAX_LOGPROBS } from "../../generation/logprobs";
import { neutral, refused } from "./request-schemas";
import { TextFormat } from "./structured-fields";

const InputText = z.object({ type: z.literal("input_text"), text: z.string() }).strict();
const OutputText = z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()).max(0).optional() }).strict();

/** An input message (EasyInputMessage or a message item): its role, and text or text parts. */
const inputMessage = <R extends "user" | "system" | "developer">(role: R) =>
  z.object({ type: z.literal("message").optional(), role: z.literal(role), content: z.union([z.string(), z.array(InputText).min(1)]) }).strict();
const InputMessage = z.discriminatedUnion("role", [
  inputMessage("user"),
  inputMessage("system"),
  inputMessage("developer"),
  z
    .object({ type: z.literal("message").optional(), role: z.literal("assistant"), content: z.union([z.string(), z.array(OutputText).min(1)]), id: z.string().optional(), status: z.string().optional() })
    .strict(),
]);

export const ResponsesRequest = z
  .object({
    model: z.string().min(1).openapi({ example: "tiny-llm" }),
    input: z
      .union([z.string().min(1, "must not be empty"), z.array(InputMessage).min(1, "needs at least one message").max(256)])
      .openapi({ description: "A user message's text, or a list of messages (user, system, developer, assistant) with text content" }),
    instructions: z.string().nullish().openapi({ description: "A system message before the input" }),
    max_output_tokens: z.number().int().min(1).max(1_000_000).nullish().openapi({ description: "Most tokens to generate (default: what the context leaves)" }),
    temperature: z.number().min(0).max(2).nullish().openapi({ description: "0 = greedy (ties: lowest id)" }),
    top_p: z.number().gt(0).max(1).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_obfuscation: neutral(z.literal(false), "false") }).strict().nullish(),
    user: z.string().max(256).nullish(),
    safety_identifier: z.string().max(128).nullish(),
    prompt_cache_key: z.string().max(1024).nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((metadata) => Object.keys(metadata).length <= 16, "at most 16 keys")
      .nullish()
      .openapi({ description: "Up to 16 key-value pairs, returned on the response" }),
    store: neutral(z.literal(false), "false (responses are not stored)"),
    tools: neutral(z.array(z.unknown()).max(0), "[]"),
    tool_choice: neutral(z.enum(["none", "auto"]), '"none" (or "auto" without tools)'),
    parallel_tool_calls: z.boolean().nullish(),
    text: z
      .object({ format: TextFormat, verbosity: neutral(z.literal("medium"), '"medium"') })
      .strict()
      .nullish(),
    truncation: neutral(z.literal("disabled"), '"disabled"'),
    service_tier: neutral(z.enum(["auto", "default"]), '"auto"'),
    background: neutral(z.literal(false), "false"),
    include: z
      .array(z.literal("message.output_text.logprobs", { error: 'only "message.output_text.logprobs" is supported by this service' }))
      .max(1)
      .nullish()
      .openapi({ description: '"message.output_text.logprobs": each output token\'s logprob (and top_logprobs alternatives) on the text part and its deltas' }),
    previous_response_id: refused("previous_response_id"),
    conversation: refused("conversation"),
    reasoning: refused("reasoning"),
    prompt: refused("prompt"),
    top_logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish().openapi({ description: `With include message.output_text.logprobs: this many likeliest tokens at each position (0–${MAX_LOGPROBS})` }),
    max_tool_calls: refused("max_tool_calls"),
    prompt_cache_retention: neutral(z.literal("in_memory"), '"in_memory"'),
  })
  .strict()
  .openapi("ResponsesRequest");
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

const textOf = (content: string | ReadonlyArray<{ text: string }>) => (typeof content === "string" ? content : content.map((part) => part.text).join("\n"));

/** The chat the model is given: the instructions as a system message, then the input's messages. */
export function responsesChat(body: ResponsesRequest): ChatMessage[] {
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input.map((item) => ({ role: item.role === "developer" ? "system" : item.role, content: textOf(item.content) }));
  return [...(body.instructions == null ? [] : [{ role: "system", content: body.instructions }]), ...input];
}

/** How many alternatives each output token's logprobs list, when the request includes them (undefined: none). */
export function responsesLogprobs(body: ResponsesRequest): number | undefined {
  return body.include?.includes("message.output_text.logprobs") ? (body.top_logprobs ?? 0) : undefined;
}
