// OpenAI's streamed chunks for completions: per-token text with vLLM's offsets for logprobs, the
// echoed prompt, token ids when asked, and usage as asked.
import type { z } from "@hono/zod-openapi";
import { codePoints, completionLogProbs } from "../../protocols/vllm-logprobs";
import type { PromptTokenLogprobs } from "../../tasks/text-generation/text-generation";
import { jsonTemplate, type StreamFormat, type TextDelta } from "./generation-stream";
import type { CompletionLogprobs } from "./response-logprobs";
import type { Done, ResponseIdentity } from "./responses";
import { type ChunkOptions, perIndex, usageChunk, usageMembers } from "./stream-chunks";

export function completionChunks(who: ResponseIdentity, options: ChunkOptions): StreamFormat {
  const base = { ...who, object: "text_completion" };
  const { promptIds } = options;
  const usage = usageMembers(options);
  const templated = promptIds === undefined && !usage.continuous;
  const chunk = (
    index: number,
    text: string,
    finishReason: Done["finishReason"] | null,
    stopReason?: Done["stopReason"],
    logprobs: z.infer<typeof CompletionLogprobs> = null,
    ids?: { prompt?: readonly number[]; tokens: readonly number[] },
  ) => ({
    ...base,
    choices: [
      {
        index,
        text,
        logprobs,
        finish_reason: finishReason,
        ...(stopReason === undefined ? {} : { stop_reason: stopReason }),
        // vLLM's CompletionResponseStreamChoice: the prompt's ids on a choice's first chunk, each
        // chunk its tokens' ids.
        ...(ids?.prompt === undefined ? {} : { prompt_token_ids: ids.prompt }),
        ...(ids === undefined ? {} : { token_ids: ids.tokens }),
      },
    ],
    ...usage.members(index),
  });
  const textChunk = perIndex((index) => jsonTemplate((slot) => chunk(index, slot, null)));
  /**
   * Per choice, the text sent before, in code points: where a chunk's offsets start (vLLM's
   * previous_text_lens).
   */
  const sent: number[] = [];
  /** Per choice, whether its first chunk (with the prompt's ids) went out. */
  const started: boolean[] = [];
  const idsOf = (index: number, tokens: readonly number[]) => {
    if (promptIds === undefined) return undefined;
    const first = started[index] !== true;
    started[index] = true;
    return first ? { prompt: promptIds(index), tokens } : { tokens };
  };
  const full = ({ text, logprobs, tokenIds }: TextDelta, index: number) => {
    usage.count(index, tokenIds);
    if (logprobs === undefined)
      return chunk(index, text, null, undefined, null, idsOf(index, tokenIds ?? []));
    const offset = sent[index] ?? 0;
    sent[index] = offset + codePoints(text);
    return chunk(
      index,
      text,
      null,
      undefined,
      completionLogProbs(logprobs, offset),
      idsOf(index, tokenIds ?? []),
    );
  };
  const { echo } = options;
  /** The echoed prompt's chunk: its text, and its tokens' logprobs when scored. */
  const echoed = (index: number, logprobs: readonly PromptTokenLogprobs[] | undefined) => {
    const text = echo?.text(index) ?? "";
    sent[index] = codePoints(text);
    return chunk(
      index,
      text,
      null,
      undefined,
      logprobs === undefined ? null : completionLogProbs(logprobs),
      idsOf(index, []),
    );
  };
  return {
    opening: (index) => (echo !== undefined && !echo.scored ? [echoed(index, undefined)] : []),
    prompt: (event, index) => (echo?.scored ? [echoed(index, event.logprobs)] : []),
    // Only chunks with logprobs need the offsets: text without them comes only after the last
    // token's.
    text: (delta, index) => [
      delta.logprobs === undefined && templated ? textChunk(delta.text, index) : full(delta, index),
    ],
    done: (done, index) => [
      chunk(index, "", done.finishReason, done.stopReason, null, idsOf(index, [])),
    ],
    usage: (total) => usageChunk(base, total, options.includeUsage),
  };
}
