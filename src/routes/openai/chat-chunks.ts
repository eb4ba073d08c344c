// OpenAI's streamed chunks for chat completions: per-token content deltas, or with tools the
// tool_calls deltas as the calls are written; usage as asked, token ids when asked.
import type { z } from "@hono/zod-openapi";
import { jsonTemplate, type StreamFormat } from "./generation-stream";
import { chatLogprobs, type ChatLogprobs } from "./response-logprobs";
import { toolFinishReason, type Done, type PerChoice, type ResponseIdentity } from "./responses";
import { type ChunkOptions, perIndex, usageChunk, usageMembers } from "./stream-chunks";
import {
  toolReader,
  type ToolMode,
  type ToolReading,
  type ToolTextReader,
} from "../../tasks/text-generation/tool-parsers";

export function chatChunks(who: ResponseIdentity, options: ChunkOptions): StreamFormat {
  const base = { ...who, object: "chat.completion.chunk" };
  const { promptIds } = options;
  const withIds = promptIds !== undefined;
  const usage = usageMembers(options);
  // The fast per-token frame holds nothing that changes but the text.
  const templated = !withIds && !usage.continuous;
  // The last chunk carries vLLM's stop_reason beside finish_reason; per-token chunks stay OpenAI's.
  // With return_token_ids, each choice's chunks carry their tokens' ids (vLLM's
  // ChatCompletionResponseStreamChoice).
  const chunk = (
    index: number,
    delta: object,
    finishReason: Done["finishReason"] | "tool_calls" | null,
    stopReason?: Done["stopReason"],
    logprobs: z.infer<typeof ChatLogprobs> = null,
    tokenIds?: readonly number[],
  ) => ({
    ...base,
    choices: [
      {
        index,
        delta,
        logprobs,
        finish_reason: finishReason,
        ...(stopReason === undefined ? {} : { stop_reason: stopReason }),
        ...(tokenIds === undefined ? {} : { token_ids: tokenIds }),
      },
    ],
    ...usage.members(index),
  });
  const textChunk = perIndex((index) =>
    jsonTemplate((slot) => chunk(index, { content: slot }, null)),
  );
  if (options.toolMode !== undefined)
    return toolCallChunks(
      options.toolMode,
      chunk,
      usage.count,
      withIds ? promptIds : undefined,
      options.includeUsage,
      base,
    );
  return {
    // As vLLM's: each choice's role chunk carries the prompt's ids.
    opening: (index) => [
      {
        ...chunk(index, { role: "assistant", content: "" }, null),
        ...(withIds ? { prompt_token_ids: promptIds(index) } : {}),
      },
    ],
    text: ({ text, logprobs, tokenIds }, index) => {
      if (logprobs === undefined && templated) return [textChunk(text, index)];
      usage.count(index, tokenIds);
      return [
        chunk(
          index,
          { content: text },
          null,
          undefined,
          logprobs === undefined ? null : chatLogprobs(logprobs),
          withIds ? (tokenIds ?? []) : undefined,
        ),
      ];
    },
    done: (done, index) => [
      chunk(index, {}, done.finishReason, done.stopReason, null, withIds ? [] : undefined),
    ],
    usage: (total) => usageChunk(base, total, options.includeUsage),
  };
}

type ChatChunk = (
  index: number,
  delta: object,
  finishReason: Done["finishReason"] | "tool_calls" | null,
  stopReason?: Done["stopReason"],
  logprobs?: z.infer<typeof ChatLogprobs>,
  tokenIds?: readonly number[],
) => object;

/**
 * A tool choice's chunks, as OpenAI streams calls: the role chunk (content null when a call is
 * forced), then `tool_calls` deltas — a call's id, type and name first, then its arguments as
 * they are written — and, with "auto", the content before the calls. Tokens that write only a
 * call's structure send nothing (unless their logprobs or ids were asked for); what the reader
 * held back at the end goes out before the finish.
 */
function toolCallChunks(
  mode: ToolMode,
  chunk: ChatChunk,
  count: (index: number, ids: readonly number[] | undefined) => void,
  promptIds: PerChoice<readonly number[]> | undefined,
  includeUsage: boolean,
  base: object,
): StreamFormat {
  const readers: ToolTextReader[] = [];
  const reader = (index: number) => (readers[index] ??= toolReader(mode));
  const withIds = promptIds !== undefined;
  const delta = ({ content, calls }: ToolReading) => ({
    ...(content === "" ? {} : { content }),
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
  });
  return {
    opening: (index) => [
      {
        ...chunk(index, { role: "assistant", content: mode.kind === "auto" ? "" : null }, null),
        ...(withIds ? { prompt_token_ids: promptIds(index) } : {}),
      },
    ],
    text: ({ text, logprobs, tokenIds }, index) => {
      count(index, tokenIds);
      const reading = reader(index).push(text);
      if (
        reading.content === "" &&
        reading.calls.length === 0 &&
        logprobs === undefined &&
        !withIds
      )
        return [];
      return [
        chunk(
          index,
          delta(reading),
          null,
          undefined,
          logprobs === undefined ? null : chatLogprobs(logprobs),
          withIds ? (tokenIds ?? []) : undefined,
        ),
      ];
    },
    done: (done, index) => {
      const rest = reader(index).end();
      const held =
        rest.content === "" && rest.calls.length === 0
          ? []
          : [chunk(index, delta(rest), null, undefined, null, withIds ? [] : undefined)];
      return [
        ...held,
        chunk(
          index,
          {},
          toolFinishReason(done.finishReason, mode, reader(index).calls.length),
          done.stopReason,
          null,
          withIds ? [] : undefined,
        ),
      ];
    },
    usage: (total) => usageChunk(base, total, includeUsage),
  };
}
