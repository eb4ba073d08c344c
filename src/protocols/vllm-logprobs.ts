// vLLM's CompletionLogProbs both ways: written as vLLM writes them (names, offsets, dicts), and
// read back into the generation capability's logprobs, tokens named by id.
import type { TokenLogprob } from "../generation/generation-request";
import type { ChunkLogProbs } from "./vllm-completion-chunk";

/** vLLM's CompletionLogProbs, as it writes them (its field order). */
export interface CompletionLogProbs {
  text_offset: number[];
  token_logprobs: Array<number | null>;
  tokens: string[];
  top_logprobs: Array<Record<string, number> | null>;
}

/**
 * A generated token as CompletionLogProbs lists it: its name, and (unless vLLM's None entry) its
 * logprob and the likeliest tokens.
 */
export interface NamedLogprob {
  token: string;
  logprob?: number;
  top?: ReadonlyArray<{ token: string; logprob: number }>;
}

/** vLLM's and OpenAI's floor for a logprob: JSON has no -Infinity. */
export const clampLogprob = (logprob: number) => Math.max(logprob, -9999);

/** Python's len(): code points, as vLLM's text offsets count. */
export function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * CompletionLogProbs as vllm/entrypoints/openai/serving_completion.py
 * `_create_completion_logprobs` writes them: each token's dict holds the token itself first,
 * then the likeliest (a token already there keeps its place, as a Python dict's key); each
 * offset adds the previous token's length to `offset`, the text sent before these tokens.
 */
export function completionLogProbs(
  entries: readonly NamedLogprob[],
  offset = 0,
): CompletionLogProbs {
  const out: CompletionLogProbs = {
    text_offset: [],
    token_logprobs: [],
    tokens: [],
    top_logprobs: [],
  };
  let at = offset;
  for (const { token, logprob, top } of entries) {
    out.tokens.push(token);
    out.text_offset.push(at);
    at += codePoints(token);
    if (logprob === undefined) {
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
      continue;
    }
    out.token_logprobs.push(clampLogprob(logprob));
    const dict: Record<string, number> = { [token]: clampLogprob(logprob) };
    for (const other of top ?? [])
      if (!Object.hasOwn(dict, other.token)) dict[other.token] = clampLogprob(other.logprob);
    out.top_logprobs.push(dict);
  }
  return out;
}

const TOKEN_ID = /^token_id:(0|[1-9]\d{0,9})$/;

/**
 * A token named as vLLM names it with return_tokens_as_token_ids ("token_id:N"); undefined
 * otherwise.
 */
function tokenIdOf(token: string): number | undefined {
  const match = TOKEN_ID.exec(token);
  return match === null ? undefined : Number(match[1]);
}

/**
 * A choice's logprobs as the generation capability's (one per id of `ids`, in order): the
 * `count` likeliest of each dict (vLLM's holds the sampled id first, then its top `count`).
 * A string saying what is wrong when they do not name exactly these ids.
 */
export function logprobsOf(
  logprobs: ChunkLogProbs,
  ids: readonly number[],
  count: number,
): TokenLogprob[] | string {
  if (logprobs.tokens.length !== ids.length || logprobs.token_logprobs.length !== ids.length)
    return `logprobs for ${logprobs.tokens.length} tokens beside ${ids.length} token_ids`;
  const out: TokenLogprob[] = [];
  for (let i = 0; i < ids.length; i++) {
    const logprob = logprobs.token_logprobs[i];
    if (tokenIdOf(logprobs.tokens[i]!) !== ids[i] || logprob == null)
      return (
        `logprobs token ${JSON.stringify(logprobs.tokens[i])} is not token_id:${ids[i]} with a ` +
        "logprob (return_tokens_as_token_ids unsupported?)"
      );
    const top: Array<readonly [number, number]> = [];
    for (const [token, value] of Object.entries(logprobs.top_logprobs?.[i] ?? {})) {
      const id = tokenIdOf(token);
      if (id === undefined) return `top_logprobs key ${JSON.stringify(token)} is not a token id`;
      top.push([id, value]);
    }
    top.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    out.push({ logprob, top: top.slice(0, count) });
  }
  return out;
}

/**
 * The prompt's logprobs off vLLM's echoed first chunk: its first `promptIds.length` entries,
 * the first one vLLM's None entry (null logprob and dict), each named by id. The rest of the
 * entries are the chunk's own tokens'. A string saying what is wrong when they do not match.
 */
export function echoedLogprobsOf(
  logprobs: ChunkLogProbs,
  promptIds: readonly number[],
  count: number,
): { prompt: Array<TokenLogprob | null>; rest: ChunkLogProbs } | string {
  const n = promptIds.length;
  if (logprobs.tokens.length < n || logprobs.token_logprobs.length < n)
    return `echoed logprobs for ${logprobs.tokens.length} tokens beside a prompt of ${n}`;
  if (tokenIdOf(logprobs.tokens[0]!) !== promptIds[0] || logprobs.token_logprobs[0] !== null)
    return "the echoed prompt's first token has a logprob, or is not token_id:N";
  const slice = (from: number, to?: number) => ({
    tokens: logprobs.tokens.slice(from, to),
    token_logprobs: logprobs.token_logprobs.slice(from, to),
    top_logprobs: logprobs.top_logprobs?.slice(from, to) ?? null,
  });
  const scored = logprobsOf(slice(1, n), promptIds.slice(1), count);
  if (typeof scored === "string") return `echoed prompt: ${scored}`;
  return { prompt: [null, ...scored], rest: slice(n) };
}
