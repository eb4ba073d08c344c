// The streamed completion chunk, written from a per-request template so each token fills in only
// its own fields.
import type { CompletionLogProbs } from "./completion-logprobs";

export interface ChunkHead {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
}

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
}

export interface TokenChunk {
  /** The chunk's tokens: one, or up to the stream interval's (ORIGIN_STREAM_INTERVAL). */
  tokenIds: readonly number[];
  finishReason: "stop" | "length" | null;
  stopReason: number | null;
  /** The prompt's ids (the first chunk with return_token_ids or echo), else null. */
  promptTokenIds: readonly number[] | null;
  /** Whether the chunk carries `token_ids` (return_token_ids) or null. */
  withIds: boolean;
  usage: Usage | null;
  /**
   * The chunk's tokens' logprobs when the request asked for them (completion-logprobs.ts), else
   * null.
   */
  logprobs: CompletionLogProbs | null;
}

/**
 * The streamed completion chunk (vLLM's CompletionStreamResponse with one choice; see
 * completions.ts for the source it follows) written from a per-request template: the
 * fixed head is serialized once, and each token fills in only its own fields. The bytes
 * are exactly JSON.stringify of the chunk object (test/unit/origin/routes/completion-chunks.test.ts
 * holds them to it), without building that object and walking it for every token.
 *
 * `data: {chunk}\n\n` for each chunk of one request's tokens, from its head.
 */
export function chunkWriter(head: ChunkHead): (chunk: TokenChunk) => string {
  const json = JSON.stringify({ ...head, choices: [{ index: 0, text: "", logprobs: null }] });
  // Everything up to the closing `}]}` of the one choice, then the per-token members.
  const prefix = `data: ${json.slice(0, -3)},"finish_reason":`;
  // Up to `"logprobs":`, for the chunks that carry them (serialized whole: they are asked for
  // rarely).
  const beforeLogprobs = `data: ${json.slice(0, -"null}]}".length)}`;
  const withLogprobs = (logprobs: CompletionLogProbs) =>
    `${beforeLogprobs}${JSON.stringify(logprobs)},"finish_reason":`;
  return ({ tokenIds, finishReason, stopReason, promptTokenIds, withIds, usage, logprobs }) =>
    `${logprobs === null ? prefix : withLogprobs(logprobs)}` +
    `${finishReason === null ? "null" : `"${finishReason}"`},"stop_reason":` +
    `${stopReason === null ? "null" : String(stopReason)},"prompt_token_ids":` +
    `${promptTokenIds === null ? "null" : `[${promptTokenIds.join(",")}]`}` +
    `,"token_ids":${withIds ? `[${tokenIds.join(",")}]` : "null"}}],"usage":` +
    `${usage === null ? "null" : JSON.stringify(usage)}}\n\n`;
}

export const usageOf = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  total_tokens: prompt + completion,
  completion_tokens: completion,
});
/**
 * vLLM's PromptTokenUsageInfo, as it reports it with --enable-prompt-tokens-details (on here):
 * only when its prefix cache served part of the prompt (serving_completion.py:
 * `if self.enable_prompt_tokens_details and num_cached_tokens`).
 */
export const promptDetails = (cachedTokens: number) =>
  cachedTokens > 0 ? { cached_tokens: cachedTokens } : null;
