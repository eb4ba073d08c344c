// What chat's and completions' streamed chunks share: how the request asked them framed, the
// usage members (stream_options), the last usage chunk and the per-token frames per choice.
import type { PerChoice } from "./responses";
import type { ToolMode } from "../../tasks/text-generation/tool-parsers";
import type { Usage } from "../../tasks/text-generation/text-generation";

/** How a request asked its stream to be framed. */
export interface ChunkOptions {
  /**
   * stream_options.include_usage: every chunk carries `usage: null` and a last chunk `choices: []`
   * the usage (OpenAI).
   */
  includeUsage: boolean;
  /**
   * vLLM's stream_options.continuous_usage_stats (with include_usage): every chunk of a choice
   * carries the usage so far instead of null — the prompt's tokens and the choice's own tokens
   * (its text events then carry their token ids, to be counted).
   */
  continuousUsage?: { promptTokens: PerChoice<number> } | undefined;
  /** return_token_ids: the prompt's ids; undefined when not asked. */
  promptIds?: PerChoice<readonly number[]> | undefined;
  /**
   * Completions' echo: the prompt's text on each choice's first chunk — with its tokens'
   * logprobs when `scored` (vLLM's echo with logprobs), else alone before the first token.
   */
  echo?: { text: PerChoice<string>; scored: boolean } | undefined;
  /**
   * Chat with tools in use: deltas carry `tool_calls` (the arguments as they come), and with "auto"
   * the content before them.
   */
  toolMode?: ToolMode | undefined;
}

export const usageChunk = (base: object, usage: Usage, includeUsage: boolean) =>
  includeUsage ? [{ ...base, choices: [], usage }] : [];

/** A pre-serialized per-token frame for each choice index, made when the index first streams. */
export function perIndex(
  make: (index: number) => (text: string) => string,
): (text: string, index: number) => string {
  const made: ((text: string) => string)[] = [];
  return (text, index) => (made[index] ??= make(index))(text);
}

/**
 * Each chunk's usage member: OpenAI's null, or vLLM's continuous count of the choice's tokens so
 * far.
 */
export function usageMembers({ includeUsage, continuousUsage }: ChunkOptions) {
  const counted: number[] = [];
  const members = (index: number) => {
    if (!includeUsage) return {};
    if (continuousUsage === undefined) return { usage: null };
    const completion = counted[index] ?? 0;
    const prompt = continuousUsage.promptTokens(index);
    return {
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
      },
    };
  };
  const count = (index: number, tokenIds: readonly number[] | undefined) => {
    counted[index] = (counted[index] ?? 0) + (tokenIds?.length ?? 0);
  };
  return { members, count, continuous: includeUsage && continuousUsage !== undefined };
}
