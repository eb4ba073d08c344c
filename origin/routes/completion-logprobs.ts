// vLLM's CompletionLogProbs from the engine's per-token logprobs, tokens named "token_id:N".
import type { TokenLogprob } from "../../src/generation/logprobs";
import { completionLogProbs, type CompletionLogProbs } from "../../src/protocols/vllm-logprobs";

export type { CompletionLogProbs } from "../../src/protocols/vllm-logprobs";

/**
 * Always "token_id:N", what vLLM writes with `return_tokens_as_token_ids` (which the edge
 * always sends): this origin keeps no tokenizer. Each top_logprobs dict is vLLM's: the
 * sampled id first, then the top `count` in rank order, at most count + 1 keys.
 */
const name = (id: number) => `token_id:${id}`;

/**
 * One entry per id of `tokenIds` (`logprobs[i]` null or undefined: vLLM's None entry, a null
 * logprob and dict). `initialTextOffset`: the length of the text sent before these tokens
 * (always 0 here: the origin's text is "").
 */
export function completionLogprobs(
  tokenIds: readonly number[],
  logprobs: ReadonlyArray<TokenLogprob | null | undefined>,
  initialTextOffset = 0,
): CompletionLogProbs {
  const entries = tokenIds.map((id, i) => {
    const logprob = logprobs[i];
    return logprob == null
      ? { token: name(id) }
      : {
          token: name(id),
          logprob: logprob.logprob,
          top: logprob.top.map(([other, value]) => ({ token: name(other), logprob: value })),
        };
  });
  return completionLogProbs(entries, initialTextOffset);
}

/**
 * The logprobs of an echoed choice or first chunk: the prompt's entries (the first vLLM's None),
 * then the generated tokens', as vLLM's serving_completion.py joins them with echo
 * (delta_token_ids: the prompt's ids, then the output's; out_logprobs: prompt_logprobs, then the
 * output's).
 */
export function echoedLogprobs(
  promptIds: readonly number[],
  promptLogprobs: ReadonlyArray<TokenLogprob | null> | undefined,
  tokenIds: readonly number[],
  logprobs: ReadonlyArray<TokenLogprob | undefined>,
): CompletionLogProbs {
  return completionLogprobs(
    [...promptIds, ...tokenIds],
    [...(promptLogprobs ?? promptIds.map(() => null)), ...logprobs],
  );
}
