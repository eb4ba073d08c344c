// The prompt's own logprobs, for vLLM's `echo` with `logprobs`.
import { tokenLogprob, type TokenLogprob } from "../../../src/generation/logprobs";

/**
 * The prompt's own logprobs, for vLLM's `echo` with `logprobs` (vllm-project/vllm
 * vllm/entrypoints/openai/protocol.py CompletionRequest.to_sampling_params: with echo,
 * prompt_logprobs = logprobs). A prefill that reports them asks the graph for the logits of
 * every prompt position (origin/onnx/last-logits.ts, `logits_index` [rows, positions, 1]);
 * prompt token i is scored on the logits of position i − 1 with the function both decode
 * loops score generated tokens with (vLLM's raw_logprobs), so a prompt token reads as it
 * did when it was generated.
 *
 * `logits_index` for a prefill that wants every position of each row: row r's positions
 * 0..n_r − 1, then n_r − 1 again over its padding, as [rows, length, 1].
 */
export function everyPositionIndex(
  promptLengths: readonly number[],
  length: number,
): BigInt64Array {
  const index = new BigInt64Array(promptLengths.length * length);
  promptLengths.forEach((n, row) => {
    for (let i = 0; i < length; i++) index[row * length + i] = BigInt(Math.min(i, n - 1));
  });
  return index;
}

/**
 * One entry per prompt id: null for the first (no position precedes it: vLLM's None), then
 * each id's logprob and the `count` likeliest ids at its position. `logits` holds the row's
 * positions in order, `vocabSize` floats each, position 0 at `at`.
 */
export function promptLogprobs(
  logits: Float32Array,
  at: number,
  vocabSize: number,
  promptIds: readonly number[],
  count: number,
): Array<TokenLogprob | null> {
  return promptIds.map((id, i) => {
    if (i === 0) return null;
    const from = at + (i - 1) * vocabSize;
    return tokenLogprob(logits.subarray(from, from + vocabSize), id, count);
  });
}
