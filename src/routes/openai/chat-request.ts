// The OpenAI-compatible request body of POST /v1/chat/completions: messages, the shared sampling
// fields, vLLM's chat extras and the tools; unknown fields are refused.
import { z } from "@hono/zod-openapi";
import { MAX_LOGPROBS } from "../../generation/logprobs";
import { neutral, refused } from "./field-policies";
import { samplingFields } from "./sampling-fields";
import { AssistantToolCall, toolFields } from "./tool-schemas";

const TextPart = z.object({ type: z.literal("text"), text: z.string() }).strict();
export const Content = z.union([z.string(), z.array(TextPart).min(1)]);

const Message = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: Content, name: z.string().optional() }).strict(),
  z
    .object({ role: z.literal("developer"), content: Content, name: z.string().optional() })
    .strict(),
  z.object({ role: z.literal("user"), content: Content, name: z.string().optional() }).strict(),
  z
    .object({
      role: z.literal("assistant"),
      content: Content.nullish(),
      name: z.string().optional(),
      refusal: z.null().optional(),
      tool_calls: z.array(AssistantToolCall).min(1).max(128).optional(),
    })
    .strict()
    .refine((message) => message.content != null || message.tool_calls !== undefined, {
      message: "an assistant message needs content or tool_calls",
      path: ["content"],
    }),
  z
    .object({ role: z.literal("tool"), content: Content, tool_call_id: z.string().max(256) })
    .strict(),
]);

export const ChatCompletionRequest = z
  .object({
    ...samplingFields,
    messages: z.array(Message).min(1, "needs at least one message").max(256),
    max_completion_tokens: z.number().int().min(1).max(1_000_000).nullish(),
    logprobs: z
      .boolean()
      .nullish()
      .openapi({
        description:
          "Each generated token's log-probability under the model (before temperature and " +
          "truncation)",
      }),
    top_logprobs: z
      .number()
      .int()
      .min(0)
      .max(MAX_LOGPROBS)
      .nullish()
      .openapi({
        description:
          "With logprobs: true, this many likeliest tokens at " +
          `each position (0–${MAX_LOGPROBS})`,
      }),
    // vLLM's chat extras (vllm/entrypoints/openai/protocol.py ChatCompletionRequest).
    add_generation_prompt: z.boolean().nullish().openapi({
      description: "vLLM: end the prompt with the template's assistant header (default true)",
    }),
    continue_final_message: z
      .boolean()
      .nullish()
      .openapi({
        description:
          "vLLM: leave the final message open, for the model to continue it (with " +
          "add_generation_prompt: false)",
      }),
    chat_template_kwargs: z
      .record(z.string(), z.unknown())
      .refine((kwargs) => Object.keys(kwargs).length <= 32, "at most 32 template variables")
      .nullish()
      .openapi({
        description:
          "vLLM: further chat-template variables (e.g. enable_thinking); the template's own " +
          "variables cannot be overridden",
      }),
    // OpenAI's identifiers and cache hints: nothing to honour beyond accepting them (the origin's
    // prefix cache finds shared prefixes by itself, and keeps them in memory).
    safety_identifier: z
      .string()
      .max(128)
      .nullish()
      .openapi({ description: "OpenAI: a stable id of the end user (replaces user); accepted" }),
    prompt_cache_key: z.string().max(1024).nullish().openapi({
      description: "OpenAI: a prompt-cache bucketing hint; accepted (prefix caching is automatic)",
    }),
    prompt_cache_retention: neutral(z.literal("in_memory"), '"in_memory"'),
    prompt_cache_options: refused("prompt_cache_options"),
    verbosity: neutral(z.literal("medium"), '"medium"'),
    moderation: refused("moderation"),
    ...toolFields,
    functions: refused("functions"),
    function_call: refused("function_call"),
    modalities: neutral(z.tuple([z.literal("text")]), '["text"]'),
    audio: refused("audio"),
    prediction: refused("prediction"),
    reasoning_effort: refused("reasoning_effort"),
    web_search_options: refused("web_search_options"),
  })
  .strict()
  .openapi("ChatCompletionRequest");
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;
