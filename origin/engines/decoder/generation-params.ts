// What a generation request asks the decoder engine for and what each of its steps
// answers: plain data, so it crosses to the engine's worker thread as it is.
import type { TokenLogprob } from "../../../src/generation/logprobs";
import type { SamplingParams } from "../../../src/generation/sampling-params";
import type { StructuredOutputs } from "../../../src/generation/structured/structured-outputs";

export type FinishReason = "stop" | "length" | "abort";

/** One decoded token, as the route streams it. */
export interface GenerationStep {
  tokenId: number;
  /** Set on the request's last token. */
  finishReason: "stop" | "length" | null;
  /**
   * The request's stop token id that ended it; null for EOS, length or none (vLLM's stop_reason).
   */
  stopReason: number | null;
  /** On the first token: the prompt tokens the prefix cache served (vLLM's num_cached_tokens). */
  cachedTokens?: number;
  /** When the request asked for logprobs: this token's, and its position's most likely ids. */
  logprob?: TokenLogprob;
  /**
   * On the first token, when the request asked for its prompt's logprobs: one per prompt id,
   * the first null (no position precedes it), as vLLM's prompt_logprobs.
   */
  promptLogprobs?: Array<TokenLogprob | null>;
}

export interface GenerationParams {
  promptIds: readonly number[];
  maxTokens: number;
  minTokens: number;
  sampling: SamplingParams;
  seed: number | undefined;
  /** The request's own stop_token_ids (reported as stop_reason). */
  stopTokenIds: readonly number[];
  ignoreEos: boolean;
  /**
   * vLLM's `logprobs`: each token's log-probability and this many alternatives (undefined: none).
   */
  logprobs?: number;
  /**
   * vLLM's prompt_logprobs (set by `echo` with `logprobs`): each prompt token's log-probability
   * and this many alternatives, on the first step. Such a prompt is computed whole, never
   * taken from the prefix cache (as vLLM's Request.skip_reading_prefix_cache).
   */
  promptLogprobs?: number;
  /**
   * vLLM's structured_outputs, reduced to what the engine enforces (checked and compiled by the
   * route; plain JSON, so it crosses to the engine's thread as it is).
   */
  structuredOutputs?: StructuredOutputs;
  /**
   * The prompt's last ids that are output generated before (a generation continued from another
   * replica): the structured output's automaton and the penalties read them as output.
   */
  outputPrefixTokens?: number;
}
