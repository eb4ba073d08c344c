// vLLM's CompletionLogProbs (vllm-project/vllm vllm/entrypoints/openai/protocol.py) as its
// serving_completion.py `_create_completion_logprobs` writes them, from the engine's per-token
// logprobs. Tokens are always named "token_id:N" — what vLLM writes with
// `return_tokens_as_token_ids: true`, which the edge always sends: this origin keeps no
// tokenizer, so it writes ids even without that flag. Each top_logprobs dict is vLLM's
// (vllm/logprobs.py append_logprobs_for_next_position): the sampled id first, then the top
// `count` in rank order, an id already present keeping its first place (a Python dict's keys):
// at most count + 1 keys, all of which vLLM's `num_output_top_logprobs >= i` filter keeps.
import type { TokenLogprob } from "../../src/generation/sampler";

export interface CompletionLogProbs {
  text_offset: number[];
  token_logprobs: Array<number | null>;
  tokens: string[];
  top_logprobs: Array<Record<string, number> | null>;
}

/** vLLM's clamp: JSON has no -Infinity, OpenAI writes -9999.0 for it. */
const clamp = (logprob: number) => Math.max(logprob, -9999);

/**
 * One entry per id of `tokenIds` (`logprobs[i]` undefined: vLLM's None entry, a null logprob
 * and dict). `initialTextOffset`: the length of the text sent before these tokens (always 0
 * here: the origin's text is ""); each next offset adds the previous token string's length.
 */
export function completionLogprobs(tokenIds: readonly number[], logprobs: ReadonlyArray<TokenLogprob | undefined>, initialTextOffset = 0): CompletionLogProbs {
  const out: CompletionLogProbs = { text_offset: [], token_logprobs: [], tokens: [], top_logprobs: [] };
  let offset = initialTextOffset;
  for (let i = 0; i < tokenIds.length; i++) {
    const token = `token_id:${tokenIds[i]}`;
    const logprob = logprobs[i];
    out.tokens.push(token);
    out.text_offset.push(offset);
    offset += token.length;
    if (logprob === undefined) {
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
      continue;
    }
    out.token_logprobs.push(clamp(logprob.logprob));
    // "token_id:N" is not an array index: a JS object keeps insertion order, and assigning a
    // key again keeps its place, as a Python dict does.
    const top: Record<string, number> = { [token]: clamp(logprob.logprob) };
    for (const [id, value] of logprob.top) top[`token_id:${id}`] = clamp(value);
    out.top_logprobs.push(top);
  }
  return out;
}
