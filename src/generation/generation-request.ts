// A generation request and its steps as token ids: what the edge's runtimes, the wire codecs and
// the origin's engines all speak. Text never crosses this line — the edge tokenizes,
// detokenizes and matches stop strings.
import type { TokenLogprob } from "./logprobs";
import type { SamplingParams as SamplerParams } from "./sampling-params";
import type { StructuredOutputs, TokenMatcher } from "./structured/structured-outputs";

export type { TokenLogprob } from "./logprobs";

/** The sampler's parameters (topK 0 = off, topP 1 = off, minP 0 = off) and the seed:
 * same seed, same prompt, same parameters → same tokens, at the edge or on the origin. */
export interface SamplingParams extends SamplerParams {
  seed?: number;
}

export interface GenerationRequest {
  promptIds: readonly number[];
  maxTokens: number;
  sampling: SamplingParams;
  /**
   * Ids that end generation, not part of the text: the EOS and the manifest's stopTokenIds
   * (unless `ignoreEos`), and the client's own.
   */
  stopTokenIds: readonly number[];
  /** vLLM's `min_tokens`: no stop id is sampled before this many ids (default 0). */
  minTokens?: number;
  /**
   * A generation continued on another replica: the prompt's last this many ids are its output so
   * far (the reference origin's `output_prefix_tokens`; vLLM has none).
   */
  outputPrefixTokens?: number;
  /**
   * vLLM's `ignore_eos`: the engine must not stop at the model's own end-of-sequence id.
   * `stopTokenIds` already leaves it out; an origin that knows its EOS is told as well.
   */
  ignoreEos?: boolean;
  /**
   * Log-probabilities wanted (vLLM's and OpenAI's `logprobs`): each generated id's, and this
   * many most likely ids at its position (0: the generated id's alone). Undefined: none.
   */
  logprobs?: number;
  /**
   * The prompt's log-probabilities wanted (vLLM's `prompt_logprobs`, and what its `echo` with
   * `logprobs` returns): each prompt id's given the ids before it, and this many most likely
   * ids at its position. Undefined: none. With `maxTokens` 0 the prompt's alone: nothing is
   * generated.
   */
  promptLogprobs?: number;
  /**
   * A structured output: `spec` as vLLM's `structured_outputs` (what an origin is sent), and
   * `matcher()`, a fresh token-level matcher over this model's vocabulary for a loop that
   * samples here. Only ids it allows are sampled; a stop id only once the output is complete.
   */
  structured?: { readonly spec: StructuredOutputs; matcher(): TokenMatcher };
  /** The API key's id, which keeps a request on one version when a canary is sticky by key. */
  keyId?: string;
  /** What names the conversation (a chat's turns up to its first user message), if known. */
  conversationKey?: string;
}

export type FinishReason = "stop" | "length";

/**
 * One step of a generation. A step with no ids and no finish reason says only that the
 * engine has accepted the request (an origin answered 200 and is prefilling): a streaming
 * route may start its response then, before the first token.
 */
export interface GenerationStep {
  /** New token ids since the last step (usually one; a stop token id is never included). */
  tokenIds: number[];
  /** Set on the last step. */
  finishReason?: FinishReason;
  /** The stop token id that ended generation, if one did. */
  stopTokenId?: number;
  /**
   * When the request asked for them: one per id of `tokenIds`, then one for `stopTokenId`
   * when it is set (a stop id is generated too, and counted in the usage).
   */
  logprobs?: TokenLogprob[];
  /**
   * When the request asked for them, on its first step with ids or a finish: one per prompt
   * id, the first null (nothing comes before it).
   */
  promptLogprobs?: Array<TokenLogprob | null>;
  /**
   * On the last step, when the engine reports it: how many prompt tokens it took from its
   * prefix cache instead of computing them (vLLM's usage.prompt_tokens_details.cached_tokens).
   */
  cachedTokens?: number;
  /** On the step that says the request was accepted: the version label of what serves it. */
  modelVersion?: string;
}
