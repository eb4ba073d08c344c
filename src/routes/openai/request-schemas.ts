// OpenAI-compatible request bodies for /v1/chat/completions and /v1/completions. Every
// parameter OpenAI or vLLM defines is either honoured, accepted at its neutral value, or
// refused with a 400 naming it — never silently ignored. Unknown fields are refused too.
import { z } from "@hono/zod-openapi";
import { MAX_LOGPROBS } from "../../generation/logprobs";
import { integerList } from "../http/integer-list";
import { neutral, refused } from "./field-policies";
import { ResponseFormat, StructuredOutputsField } from "./structured-fields";
import { AssistantToolCall, toolFields } from "./tool-schemas";
import { ServiceError } from "../../errors/service-error";
import {
  parseLosslessJson,
  type ChatMessage,
  type LosslessJson,
  type TemplateValue,
} from "../../tokenizers/chat-template";

export { neutral, refused } from "./field-policies";

/** Most entries a logit_bias may have (OpenAI documents none; vLLM none either). */
const MAX_LOGIT_BIAS = 1024;

/**
 * Most choices one request may ask for. Each choice is a generation of its own (one origin
 * stream, as vLLM fans `n` out into child requests), and a Worker invocation holds at most
 * six connections open at once: more streams would queue behind the first six.
 */
const MAX_CHOICES = 6;
/** Most generations one request streams at once (prompts × n): the connections it may hold open. */
export const MAX_STREAMS = MAX_CHOICES;

const Stop = z.union([z.string().max(256), z.array(z.string().max(256)).max(16)]);
const MAX_TOKEN_ID = 2 ** 31 - 1;
/** Most ids allowed_token_ids may list (vLLM sets none; a vocabulary's worth is plenty). */
const MAX_ALLOWED_IDS = 65_536;
/**
 * A token id, checked by hand for prompts of token ids: a schema per id costs ~0.3 µs (0.13 ms for
 * 440 ids).
 */
const isTokenId = (id: unknown): boolean =>
  Number.isInteger(id) && (id as number) >= 0 && (id as number) <= MAX_TOKEN_ID;

/** Sampling and limits shared by both endpoints (vLLM's names where OpenAI has none). */
export const samplingFields = {
  model: z.string().min(1).openapi({ example: "tiny-llm" }),
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullish()
    .openapi({ description: "Most tokens to generate" }),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .nullish()
    .openapi({ description: "0 = greedy (ties: lowest id)" }),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z
    .number()
    .int()
    .min(-1)
    .max(1_000_000)
    .nullish()
    .openapi({ description: "vLLM: -1 or 0 = off" }),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z
    .number()
    .int()
    .min(Number.MIN_SAFE_INTEGER)
    .max(Number.MAX_SAFE_INTEGER)
    .nullish()
    .openapi({ description: "Same seed, same text" }),
  stop: Stop.nullish().openapi({
    description: "Up to 16 strings; matched at the edge across token boundaries, never sent",
  }),
  stream: z.boolean().nullish(),
  stream_options: z
    .object({
      include_usage: z.boolean().nullish(),
      continuous_usage_stats: z.boolean().nullish().openapi({
        description:
          "vLLM: with include_usage, every chunk carries the usage so far (the prompt's tokens, the choice's tokens)",
      }),
      // OpenAI's stream obfuscation (random padding on each delta against size side channels) is
      // not done here.
      include_obfuscation: neutral(z.literal(false), "false"),
    })
    .strict()
    .nullish()
    .openapi({
      description:
        "include_usage: a last chunk with the usage; vLLM's continuous_usage_stats: the usage so far on every chunk too; OpenAI's include_obfuscation (padded deltas) only at false",
    }),
  user: z.string().max(256).nullish(),
  n: z
    .number()
    .int()
    .min(1)
    .max(MAX_CHOICES)
    .nullish()
    .openapi({
      description: `Choices to generate for the prompt (1–${MAX_CHOICES}); with a seed, choice i is sampled with seed + i, as vLLM's`,
    }),
  best_of: neutral(z.literal(1), "1"),
  // Applied at the sampler, edge or origin, as vLLM applies them (src/generation/sampler.ts).
  presence_penalty: z
    .number()
    .min(-2)
    .max(2)
    .nullish()
    .openapi({ description: "Subtracted once from the logit of every token generated so far" }),
  frequency_penalty: z.number().min(-2).max(2).nullish().openapi({
    description: "Subtracted from the logit of every token generated so far, times its count",
  }),
  repetition_penalty: z.number().gt(0).max(1_000).nullish().openapi({
    description:
      "vLLM: tokens of the prompt and the output so far have a logit > 0 divided by it, others multiplied (1 = off)",
  }),
  logit_bias: z
    .record(
      z.string().regex(/^(0|[1-9]\d{0,9})$/, "keys are token ids (decimal integers)"),
      z.number().min(-100).max(100),
    )
    .refine(
      (bias) => Object.keys(bias).length <= MAX_LOGIT_BIAS,
      `at most ${MAX_LOGIT_BIAS} token ids`,
    )
    .nullish()
    .openapi({
      maxProperties: MAX_LOGIT_BIAS,
      description:
        "Token id → bias (-100 to 100) added to its logit before sampling; -100 bans it, 100 all but forces it",
    }),
  service_tier: neutral(z.enum(["auto", "default"]), '"auto"'),
  store: neutral(z.literal(false), "false"),
  metadata: refused("metadata"),
  // vLLM's extra sampling parameters (vllm/entrypoints/openai/protocol.py), as benchmark
  // clients send them (`vllm bench serve --ignore-eos`, genai-perf's min_tokens).
  ignore_eos: z.boolean().nullish().openapi({
    description:
      "vLLM: keep generating after the model's end-of-sequence token (stop_token_ids still stop)",
  }),
  min_tokens: z.number().int().min(0).max(1_000_000).nullish().openapi({
    description:
      "vLLM: no stop token id is sampled, and no stop string counts, before this many tokens",
  }),
  stop_token_ids: integerList(0, MAX_TOKEN_ID).max(64).nullish().openapi({
    description: "vLLM: token ids that end generation (finish_reason stop; not part of the text)",
  }),
  allowed_token_ids: integerList(0, MAX_TOKEN_ID)
    .min(1, "allowed_token_ids must not be empty")
    .max(MAX_ALLOWED_IDS)
    .nullish()
    .openapi({
      description: `vLLM: only these token ids can be generated (1–${MAX_ALLOWED_IDS} ids; the model's end-of-sequence only if listed)`,
    }),
  include_stop_str_in_output: z.boolean().nullish().openapi({
    description: "vLLM: a matched stop string ends the text instead of being cut from it",
  }),
  truncate_prompt_tokens: z
    .number()
    .int()
    .min(-1)
    .max(1_000_000)
    .refine(
      (value) => value !== 0,
      "0 would leave no prompt: -1 (the context's length) or a count from 1",
    )
    .nullish()
    .openapi({
      description:
        "vLLM: keep only the prompt's last this many tokens (after the chat template); -1: as many as the context holds",
    }),
  return_token_ids: z.boolean().nullish().openapi({
    description:
      "vLLM: the answer carries the prompt's token ids (prompt_token_ids) and each choice's generated ids (token_ids, per chunk when streamed)",
  }),
  skip_special_tokens: neutral(z.literal(true), "true"),
  // Structured outputs (src/routes/openai/structured-fields.ts): enforced at the sampler, edge or
  // origin.
  response_format: ResponseFormat,
  structured_outputs: StructuredOutputsField,
};

const TextPart = z.object({ type: z.literal("text"), text: z.string() }).strict();
const Content = z.union([z.string(), z.array(TextPart).min(1)]);

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
    logprobs: z.boolean().nullish().openapi({
      description:
        "Each generated token's log-probability under the model (before temperature and truncation)",
    }),
    top_logprobs: z
      .number()
      .int()
      .min(0)
      .max(MAX_LOGPROBS)
      .nullish()
      .openapi({
        description: `With logprobs: true, this many likeliest tokens at each position (0–${MAX_LOGPROBS})`,
      }),
    // vLLM's chat extras (vllm/entrypoints/openai/protocol.py ChatCompletionRequest).
    add_generation_prompt: z.boolean().nullish().openapi({
      description: "vLLM: end the prompt with the template's assistant header (default true)",
    }),
    continue_final_message: z.boolean().nullish().openapi({
      description:
        "vLLM: leave the final message open, for the model to continue it (with add_generation_prompt: false)",
    }),
    chat_template_kwargs: z
      .record(z.string(), z.unknown())
      .refine((kwargs) => Object.keys(kwargs).length <= 32, "at most 32 template variables")
      .nullish()
      .openapi({
        description:
          "vLLM: further chat-template variables (e.g. enable_thinking); the template's own variables cannot be overridden",
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

const PROMPT_MAX = 1_000_000;
/**
 * Most prompts one request may batch (OpenAI's list form, as lm-evaluation-harness sends its
 * batches): each is a generation of its own, run six at a time (a Worker invocation's open
 * connections); streamed, at most six generations in all (prompts × n).
 */
export const MAX_PROMPTS = 64;

/** One prompt of a request: its text or token ids, and the field that names it in errors. */
export type PromptItem = { text: string; field: string } | { ids: number[]; field: string };

/**
 * OpenAI's four prompt forms: a string, a list of token ids (sent to the model as they are,
 * without a BOS, as vLLM does), or a list of either (a batch: one generation per prompt,
 * choices indexed prompt × n + choice, as vLLM's). Numbers come first in the element union (a
 * list of ids tries one member per id, not two), and ids are checked by hand in the transform.
 */
const Prompt = z
  .union(
    [
      z.string().max(PROMPT_MAX),
      z
        .array(
          z.union([z.number(), z.string().max(PROMPT_MAX), z.array(z.number()).max(PROMPT_MAX)]),
        )
        .max(PROMPT_MAX),
    ],
    {
      error: "expected a string, a list of token ids, or a list of these",
    },
  )
  .transform((prompt, context): PromptItem[] => {
    if (typeof prompt === "string") {
      if (prompt.length === 0) context.addIssue({ code: "custom", message: "must not be empty" });
      return [{ text: prompt, field: "prompt" }];
    }
    if (prompt.length === 0) {
      context.addIssue({ code: "custom", message: "must not be empty" });
      return z.NEVER;
    }
    const listed = typeof prompt[0] !== "number";
    if (listed && prompt.length > MAX_PROMPTS) {
      context.addIssue({
        code: "custom",
        message: `at most ${MAX_PROMPTS} prompts per request, got ${prompt.length}`,
      });
      return z.NEVER;
    }
    const items = listed ? prompt : [prompt];
    return items.map((single, at): PromptItem => {
      const prefix = listed ? [at] : [];
      const field = listed ? `prompt.${at}` : "prompt";
      if (typeof single === "string") {
        if (single.length === 0)
          context.addIssue({ code: "custom", message: "must not be empty", path: prefix });
        return { text: single, field };
      }
      if (typeof single === "number") {
        context.addIssue({
          code: "custom",
          message: "a batch holds strings or lists of token ids, not ids alone",
          path: prefix,
        });
        return { ids: [], field };
      }
      const ids = single as unknown[];
      if (ids.length === 0)
        context.addIssue({ code: "custom", message: "must not be empty", path: prefix });
      const bad = ids.findIndex((id) => !isTokenId(id));
      if (bad !== -1)
        context.addIssue({
          code: "custom",
          message: "a token id is an integer from 0",
          path: [...prefix, bad],
        });
      return { ids: ids as number[], field };
    });
  })
  .openapi({
    description: `A string, a list of token ids (sent as they are, no BOS added), or a list of up to ${MAX_PROMPTS} of these (a batch: choice i·n + j is prompt i's choice j)`,
    example: "Once upon a time",
  });

export const CompletionRequest = z
  .object({
    ...samplingFields,
    prompt: Prompt,
    logprobs: z
      .number()
      .int()
      .min(0)
      .max(MAX_LOGPROBS)
      .nullish()
      .openapi({
        description: `Each generated token's log-probability and this many likeliest tokens at its position (0–${MAX_LOGPROBS}, vLLM's bound)`,
      }),
    // vLLM's and OpenAI's legacy completions: 0 only with echo (the prompt scored, nothing
    // generated).
    max_tokens: z.number().int().min(0).max(1_000_000).nullish().openapi({
      description:
        "Most tokens to generate (default 16); 0 only with echo: the prompt alone, scored with logprobs",
    }),
    top_logprobs: neutral(z.literal(0), "0"),
    echo: z.boolean().nullish().openapi({
      description:
        "The prompt's text before the completion's; with logprobs, the prompt's tokens' logprobs before the completion's (the first token has none), as lm-evaluation-harness reads them",
    }),
    suffix: refused("suffix"),
  })
  .strict()
  .openapi("CompletionRequest");
export type CompletionRequest = z.infer<typeof CompletionRequest>;

/** Message content as vLLM flattens a list of text parts: joined with "\n". */
export function flattenContent(content: z.infer<typeof Content>): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("\n");
}

/**
 * Chat messages as the template reads them: content flat, `developer` as `system` (OpenAI's
 * newer name), an assistant turn's tool call arguments parsed from their JSON text (as vLLM's
 * chat_utils does for templates: an empty text is {}), numbers kept as written.
 */
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
