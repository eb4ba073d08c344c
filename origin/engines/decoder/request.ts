// One generation request inside the decoder engine: what it asked for, where it stands,
// and the channel its steps go out on.
import type { TokenLogprob } from "../../../src/generation/logprobs";
import {
  createPrng,
  hasPenalties,
  TokenHistory,
  type Prng,
  type SamplingParams,
} from "../../../src/generation/sampler";
import type { StructuredOutputs } from "../../../src/generation/structured/structured-outputs";
import { Channel } from "./channel";
import type { Constraint } from "./constraint";
import type { PromptBlocks } from "./prefix-cache";

export type FinishReason = "stop" | "length" | "abort";

/** One decoded token, as the route streams it. */
export interface GenerationStep {
  tokenId: number;
  /** Set on the request's last token. */
  finishReason: "stop" | "length" | null;
  /** The request's stop token id that ended it; null for EOS, length or none (vLLM's stop_reason). */
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
  /** vLLM's `logprobs`: each token's log-probability and this many alternatives (undefined: none). */
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
}

/** How a request enters the engine when the engine runs on a thread of its own (thread.ts). */
export interface RequestOptions {
  /** Where its steps go (default: a new channel the caller reads). */
  steps?: Channel<GenerationStep>;
  /** When it arrived, on this thread's performance.now() clock (default: now). */
  arrivedAt?: number;
  /** Called when it leaves the queue for the batch. */
  admitted?: () => void;
}

export class DecodeRequest {
  readonly steps: Channel<GenerationStep>;
  readonly rng: Prng;
  readonly generated: number[] = [];
  /** Its prompt's and generated ids, kept only when a penalty reads them. */
  readonly history: TokenHistory | undefined;
  state: "waiting" | "running" | "finished" = "waiting";
  aborted = false;
  /** Tokens of this request whose keys/values are in the cache. */
  filled = 0;
  /** The ids it may not sample before min_tokens (built once, on its first token). */
  suppressed: ReadonlySet<number> | undefined;
  /** Prompt tokens whose keys/values came from the prefix cache (set when admitted). */
  cachedTokens = 0;
  /** Its prompt's blocks and their hashes for the prefix cache, computed once. */
  blocks: PromptBlocks | undefined;
  /** The last sampled token, fed to the next decode step. */
  pending = -1;
  readonly arrivedAt: number;
  firstTokenAt = 0;
  lastTokenAt = 0;
  /** Called when the request leaves the queue for the batch. */
  readonly admitted: (() => void) | undefined;

  constructor(
    readonly id: string,
    readonly params: GenerationParams,
    options: RequestOptions = {},
    /** Its structured output's state, when it asked for one. */
    readonly constraint?: Constraint,
  ) {
    this.steps = options.steps ?? new Channel<GenerationStep>();
    this.arrivedAt = options.arrivedAt ?? performance.now();
    this.admitted = options.admitted;
    this.rng = createPrng(params.seed ?? Math.floor(Math.random() * 2 ** 52));
    this.history = hasPenalties(params.sampling) ? new TokenHistory(params.promptIds) : undefined;
  }
}
