// OpenAI response and chunk shapes for chat completions and completions.
import { z } from "@hono/zod-openapi";
import type { TextEvent, Usage } from "../../tasks/text-generation/text-generation";
import { jsonTemplate, totalUsage, type Collected, type StreamFormat } from "./generation-stream";

type Done = Extract<TextEvent, { type: "done" }>;

export const UsageSchema = z
  .object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z
      .object({ cached_tokens: z.number().int() })
      .optional()
      .openapi({ description: "The prompt tokens the GPU origin's prefix cache served (as OpenAI's; vLLM's with --enable-prompt-tokens-details), when the origin reports them" }),
  })
  .openapi("Usage");
const FinishReason = z.enum(["stop", "length"]);
/** vLLM's extra field, beside OpenAI's: what stopped generation. */
const StopReason = z
  .union([z.string(), z.number().int(), z.null()])
  .openapi({ description: "vLLM: the stop string that matched, or the stop token id that ended generation (not the model's EOS); null otherwise" });

export const ChatCompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal("assistant"), content: z.string(), refusal: z.null() }),
        logprobs: z.null(),
        finish_reason: FinishReason,
        stop_reason: StopReason,
      }),
    ),
    usage: UsageSchema,
  })
  .openapi("ChatCompletionResponse");

export const CompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("text_completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(z.object({ index: z.number().int(), text: z.string(), logprobs: z.null(), finish_reason: FinishReason, stop_reason: StopReason })),
    usage: UsageSchema,
  })
  .openapi("CompletionResponse");

export interface ResponseIdentity {
  id: string;
  created: number;
  model: string;
}

export function identity(prefix: string, model: string): ResponseIdentity {
  return { id: `${prefix}-${crypto.randomUUID().replaceAll("-", "")}`, created: Math.floor(Date.now() / 1000), model };
}

export function chatCompletion(who: ResponseIdentity, choices: readonly Collected[]): z.infer<typeof ChatCompletionResponse> {
  return {
    ...who,
    object: "chat.completion",
    choices: choices.map(({ text, done }, index) => ({ index, message: { role: "assistant", content: text, refusal: null }, logprobs: null, finish_reason: done.finishReason, stop_reason: done.stopReason })),
    usage: totalUsage(choices.map(({ done }) => done.usage)),
  };
}

export function completion(who: ResponseIdentity, choices: readonly Collected[]): z.infer<typeof CompletionResponse> {
  return {
    ...who,
    object: "text_completion",
    choices: choices.map(({ text, done }, index) => ({ index, text, logprobs: null, finish_reason: done.finishReason, stop_reason: done.stopReason })),
    usage: totalUsage(choices.map(({ done }) => done.usage)),
  };
}

/** With include_usage every chunk carries `usage: null` and a last chunk `choices: []` carries the usage (OpenAI). */
const usageFields = (includeUsage: boolean) => (includeUsage ? { usage: null } : {});
const usageChunk = (base: object, usage: Usage, includeUsage: boolean) => (includeUsage ? [{ ...base, choices: [], usage }] : []);

/** A pre-serialized per-token frame for each choice index, made when the index first streams. */
function perIndex(make: (index: number) => (text: string) => string): (text: string, index: number) => string {
  const made: ((text: string) => string)[] = [];
  return (text, index) => (made[index] ??= make(index))(text);
}

export function chatChunks(who: ResponseIdentity, includeUsage: boolean): StreamFormat {
  const base = { ...who, object: "chat.completion.chunk" };
  // The last chunk carries vLLM's stop_reason beside finish_reason; per-token chunks stay OpenAI's.
  const chunk = (index: number, delta: object, finishReason: Done["finishReason"] | null, stopReason?: Done["stopReason"]) => ({
    ...base,
    choices: [{ index, delta, logprobs: null, finish_reason: finishReason, ...(stopReason === undefined ? {} : { stop_reason: stopReason }) }],
    ...usageFields(includeUsage),
  });
  const textChunk = perIndex((index) => jsonTemplate((slot) => chunk(index, { content: slot }, null)));
  return {
    opening: (index) => [chunk(index, { role: "assistant", content: "" }, null)],
    text: (text, index) => [textChunk(text, index)],
    done: (done, index) => [chunk(index, {}, done.finishReason, done.stopReason)],
    usage: (usage) => usageChunk(base, usage, includeUsage),
  };
}

export function completionChunks(who: ResponseIdentity, includeUsage: boolean): StreamFormat {
  const base = { ...who, object: "text_completion" };
  const chunk = (index: number, text: string, finishReason: Done["finishReason"] | null, stopReason?: Done["stopReason"]) => ({
    ...base,
    choices: [{ index, text, logprobs: null, finish_reason: finishReason, ...(stopReason === undefined ? {} : { stop_reason: stopReason }) }],
    ...usageFields(includeUsage),
  });
  const textChunk = perIndex((index) => jsonTemplate((slot) => chunk(index, slot, null)));
  return {
    opening: () => [],
    text: (text, index) => [textChunk(text, index)],
    done: (done, index) => [chunk(index, "", done.finishReason, done.stopReason)],
    usage: (usage) => usageChunk(base, usage, includeUsage),
  };
}

const responseChunk = jsonTemplate((response) => ({ response }));

/** Workers AI's text-generation stream: `data: {"response": "…"}` per delta, the usage last. */
export function workersAiChunks(): StreamFormat {
  return {
    opening: () => [],
    text: (response) => [responseChunk(response)],
    done: () => [],
    usage: (usage) => [{ response: "", usage }],
  };
}
