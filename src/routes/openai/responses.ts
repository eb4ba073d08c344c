// OpenAI response shapes for chat completions and completions (their logprobs:
// response-logprobs.ts; streamed chunks: chat-chunks.ts, completion-chunks.ts).
import { z } from "@hono/zod-openapi";
import { completionLogProbs } from "../../protocols/vllm-logprobs";
import type { TextEvent } from "../../tasks/text-generation/text-generation";
import { totalUsage, type Collected } from "./generation-stream";
import { ChatLogprobs, CompletionLogprobs, chatLogprobs } from "./response-logprobs";
import {
  readToolText,
  type ToolCall,
  type ToolMode,
} from "../../tasks/text-generation/tool-parsers";

export type Done = Extract<TextEvent, { type: "done" }>;

export const UsageSchema = z
  .object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    prompt_tokens_details: z
      .object({ cached_tokens: z.number().int() })
      .optional()
      .openapi({
        description:
          "The prompt tokens the GPU origin's prefix cache served (as OpenAI's; " +
          "vLLM's with --enable-prompt-tokens-details), when the origin reports them",
      }),
  })
  .openapi("Usage");
const FinishReason = z.enum(["stop", "length", "tool_calls"]);
/** vLLM's extra field, beside OpenAI's: what stopped generation. */
const StopReason = z.union([z.string(), z.number().int(), z.null()]).openapi({
  description:
    "vLLM: the stop string that matched, or the stop token id " +
    "that ended generation (not the model's EOS); null otherwise",
});

/** vLLM's return_token_ids: the ids the model was given, and those it generated. */
const PromptTokenIds = z
  .array(z.number().int())
  .optional()
  .openapi({
    description:
      "vLLM, with return_token_ids: the prompt's token ids " +
      "as the model was given them (after the chat template)",
  });
const TokenIds = z
  .array(z.number().int())
  .optional()
  .openapi({
    description:
      "vLLM, with return_token_ids: the generated token ids, a stop " +
      "token included (as many as the usage's completion_tokens)",
  });

/** A value for each choice, by its index: a batch's choices have prompts of their own. */
export type PerChoice<T> = (index: number) => T;

/** What the response says besides the text, as the request asked. */
export interface ResponseExtras {
  logprobs: boolean;
  /** return_token_ids: the prompt's ids; undefined when not asked. */
  promptIds?: PerChoice<readonly number[]> | undefined;
  /**
   * echo: the prompt's text, before each choice's (with logprobs, its tokens' before the choice's).
   */
  echo?: PerChoice<string> | undefined;
  /**
   * Choices per prompt (a batch's `n`): the usage counts each prompt once. Default: all of them.
   */
  perPrompt?: number | undefined;
  /** Tools in use: the text is read as their calls (and, with "auto", content). */
  toolMode?: ToolMode | undefined;
}

/**
 * A tool choice's finish reason, as OpenAI's and vLLM's: "tool_calls" when "required" or "auto"
 * made calls, "stop" for a named function; "length" stays (the arguments were cut).
 */
export function toolFinishReason(
  reason: Done["finishReason"],
  mode: ToolMode,
  calls: number,
): z.infer<typeof FinishReason> {
  return reason === "stop" && mode.kind !== "named" && calls > 0 ? "tool_calls" : reason;
}

const ToolCallSchema = z
  .object({
    id: z.string(),
    type: z.literal("function"),
    function: z.object({ name: z.string(), arguments: z.string() }),
  })
  .openapi("ChatCompletionMessageToolCall");

/**
 * The assistant message: its text; with tools, its calls and the text before them (null when
 * there is none, as vLLM's; always null when a call was forced).
 */
function assistantMessage(
  text: string,
  mode: ToolMode | undefined,
): { role: "assistant"; content: string | null; refusal: null; tool_calls?: ToolCall[] } {
  if (mode === undefined) return { role: "assistant", content: text, refusal: null };
  const { content, calls } = readToolText(text, mode);
  return {
    role: "assistant",
    content: content === "" ? null : content,
    refusal: null,
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  };
}

const ModelVersion = z
  .string()
  .optional()
  .openapi({
    description:
      "The version label of the replicas that served it, when the model is served in two " +
      "versions (ORIGIN_CANARY); also the x-model-version header",
  });

export const ChatCompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal("assistant"),
          content: z
            .string()
            .nullable()
            .openapi({
              description:
                "The text; with tools, the text before the calls " +
                "(null when none, and always for a forced call)",
            }),
          refusal: z.null(),
          tool_calls: z
            .array(ToolCallSchema)
            .optional()
            .openapi({
              description:
                'The calls the model made (a named tool_choice, "required", or "auto" ' +
                "when it chose to), each one's arguments the JSON text the model wrote",
            }),
        }),
        logprobs: ChatLogprobs,
        finish_reason: FinishReason,
        stop_reason: StopReason,
        token_ids: TokenIds,
      }),
    ),
    usage: UsageSchema,
    prompt_token_ids: PromptTokenIds,
    model_version: ModelVersion,
  })
  .openapi("ChatCompletionResponse");

export const CompletionResponse = z
  .object({
    id: z.string(),
    object: z.literal("text_completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        text: z.string(),
        logprobs: CompletionLogprobs,
        finish_reason: FinishReason,
        stop_reason: StopReason,
        prompt_token_ids: PromptTokenIds,
        token_ids: TokenIds,
      }),
    ),
    usage: UsageSchema,
    model_version: ModelVersion,
  })
  .openapi("CompletionResponse");

export interface ResponseIdentity {
  id: string;
  created: number;
  model: string;
}

export function identity(prefix: string, model: string): ResponseIdentity {
  return {
    id: `${prefix}-${crypto.randomUUID().replaceAll("-", "")}`,
    created: Math.floor(Date.now() / 1000),
    model,
  };
}

const tokenIdsOf = (choice: Collected, extras: ResponseExtras) =>
  extras.promptIds === undefined ? {} : { token_ids: choice.tokenIds ?? [] };

/** `model_version` when the choices were served by a labelled version (distinct, joined). */
function modelVersionOf(choices: readonly Collected[]): { model_version?: string } {
  const versions = [...new Set(choices.flatMap((choice) => choice.modelVersion ?? []))];
  return versions.length === 0 ? {} : { model_version: versions.join(", ") };
}

export function chatCompletion(
  who: ResponseIdentity,
  choices: readonly Collected[],
  extras: ResponseExtras = { logprobs: false },
): z.infer<typeof ChatCompletionResponse> {
  return {
    ...who,
    object: "chat.completion",
    choices: choices.map((choice, index) => {
      const message = assistantMessage(choice.text, extras.toolMode);
      const { finishReason } = choice.done;
      return {
        index,
        message,
        logprobs: extras.logprobs ? chatLogprobs(choice.logprobs ?? []) : null,
        finish_reason:
          extras.toolMode === undefined
            ? finishReason
            : toolFinishReason(finishReason, extras.toolMode, message.tool_calls?.length ?? 0),
        stop_reason: choice.done.stopReason,
        ...tokenIdsOf(choice, extras),
      };
    }),
    usage: totalUsage(choices.map(({ done }) => done.usage)),
    // As vLLM's ChatCompletionResponse: the prompt's ids once, beside the usage.
    ...(extras.promptIds === undefined ? {} : { prompt_token_ids: [...extras.promptIds(0)] }),
    ...modelVersionOf(choices),
  };
}

export function completion(
  who: ResponseIdentity,
  choices: readonly Collected[],
  extras: ResponseExtras = { logprobs: false },
): z.infer<typeof CompletionResponse> {
  return {
    ...who,
    object: "text_completion",
    choices: choices.map((choice, index) => ({
      index,
      text: (extras.echo?.(index) ?? "") + choice.text,
      logprobs: extras.logprobs
        ? completionLogProbs([...(choice.promptLogprobs ?? []), ...(choice.logprobs ?? [])])
        : null,
      finish_reason: choice.done.finishReason,
      stop_reason: choice.done.stopReason,
      // As vLLM's CompletionResponseChoice: each choice with the prompt's ids and its own.
      ...(extras.promptIds === undefined ? {} : { prompt_token_ids: [...extras.promptIds(index)] }),
      ...tokenIdsOf(choice, extras),
    })),
    usage: totalUsage(
      choices.map(({ done }) => done.usage),
      extras.perPrompt,
    ),
    ...modelVersionOf(choices),
  };
}
