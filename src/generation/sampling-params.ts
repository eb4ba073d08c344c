// Sampling parameters as both decode loops read them (vLLM's names, normalized), and which of
// them pick the argmax.

/** Sampling parameters as vLLM names them, normalized: topK 0 = off, topP 1 = off, minP 0 = off. */
export interface SamplingParams {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  /** OpenAI's presence_penalty, in [-2, 2] (absent or 0 = off). */
  presencePenalty?: number;
  /** OpenAI's frequency_penalty, in [-2, 2] (absent or 0 = off). */
  frequencyPenalty?: number;
  /** vLLM's repetition_penalty, > 0 (absent or 1 = off). */
  repetitionPenalty?: number;
  /** OpenAI's logit_bias as [token id, bias] pairs, bias in [-100, 100] (absent or empty = off). */
  logitBias?: ReadonlyArray<readonly [number, number]>;
  /** vLLM's allowed_token_ids: only these ids can be sampled (absent = all; never empty). */
  allowedTokenIds?: readonly number[];
}

export const GREEDY: SamplingParams = { temperature: 0, topK: 0, topP: 1, minP: 0 };

/** Whether these parameters pick the argmax (no draw is made). */
export function isGreedy(params: SamplingParams): boolean {
  return params.temperature === 0 || params.topK === 1;
}
