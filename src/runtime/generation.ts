// The generation capability: prompt token ids and sampling parameters in, an async stream
// of token-id steps out, so the same task runs over the in-isolate decode loop and over any
// vLLM-compatible origin. The request and step types live with the kernels (shared with origin/).
import type { GenerationRequest, GenerationStep } from "../generation/generation-request";

export type {
  FinishReason,
  GenerationRequest,
  GenerationStep,
  SamplingParams,
  TokenLogprob,
} from "../generation/generation-request";

export interface GenerationCapability {
  /** Context length the model accepts (prompt + generated ids). */
  readonly contextLength: number;
  /**
   * Streams the generated ids. Breaking out of the iteration or aborting `signal` stops
   * the work behind it (the decode loop, or the origin's request) within one step. May
   * start with one step that has no ids (accepted, see GenerationStep).
   */
  generate(request: GenerationRequest, signal: AbortSignal): AsyncIterable<GenerationStep>;
}
