// One generation request inside the decoder engine: what it asked for, where it stands,
// and the channel its steps go out on.
import { createPrng, type Prng } from "../../../src/generation/prng";
import { hasPenalties, TokenHistory } from "../../../src/generation/logit-processors";
import { Channel } from "./channel";
import type { Constraint } from "./constraint";
import type { GenerationParams, GenerationStep } from "./generation-params";
import type { PromptBlocks } from "./prefix-cache";

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
    if (hasPenalties(params.sampling)) {
      // A continued generation's earlier output counts as output, as it did on its first replica.
      const { promptIds, outputPrefixTokens = 0 } = params;
      const prompt = promptIds.length - outputPrefixTokens;
      this.history = new TokenHistory(promptIds.slice(0, prompt));
      for (const id of promptIds.slice(prompt)) this.history.add(id);
    } else this.history = undefined;
  }
}
