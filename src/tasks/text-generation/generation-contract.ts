// The text generation task's contract: what a route hands it (a prompt, generation options)
// and what it streams back (text events, usage). text-generation.ts implements it.
import type { TextGenerationManifest } from "../../models/manifest";
import type { FinishReason, SamplingParams } from "../../runtime";
import type { ChatMessage, TemplateValue } from "../../tokenizers/chat-template";
import type { StructuredOutputs } from "../../generation/structured/structured-outputs";
import type { PromptTokenLogprobs, TokenLogprobs } from "./token-names";

/**
 * Chat messages (vLLM's template options beside them), a text prompt, or a prompt already
 * tokenized (sent as it is, no BOS added).
 */
export type PromptInput =
  | {
      messages: readonly ChatMessage[];
      /** Tool definitions for templates that list them (vLLM passes the request's tools). */
      tools?: readonly TemplateValue[];
      addGenerationPrompt?: boolean;
      continueFinalMessage?: boolean;
      kwargs?: Readonly<Record<string, TemplateValue>>;
    }
  | { prompt: string; field?: string }
  | { promptIds: readonly number[]; field?: string };

export interface GenerationOptions {
  /** The caller's API key id (a canary sticky by key keeps its requests on one version). */
  keyId?: string;
  /** What names the conversation (a canary keeps its turns on one version); else its prefix. */
  conversationKey?: string;
  /** Undefined: as many as the context leaves. */
  maxTokens: number | undefined;
  sampling: SamplingParams;
  stop: readonly string[];
  /**
   * vLLM's `min_tokens`: before this many tokens no stop id is sampled and no stop string counts.
   */
  minTokens?: number;
  /** vLLM's `ignore_eos`: the model's end-of-sequence ids do not end generation. */
  ignoreEos?: boolean;
  /** The client's own stop token ids (vLLM's `stop_token_ids`), beside the model's. */
  stopTokenIds?: readonly number[];
  /**
   * vLLM's `include_stop_str_in_output`: a matched stop string ends the text instead of being cut.
   */
  includeStopString?: boolean;
  /** Log-probabilities: each generated token's and this many alternatives (undefined: none). */
  logprobs?: number;
  /** vLLM's `return_token_ids`: text events carry the ids of their tokens. */
  tokenIds?: boolean;
  /**
   * The prompt's logprobs (vLLM's echo with logprobs): a `prompt` event carries them, each
   * prompt token's and this many alternatives, before the first text. With `maxTokens` 0
   * nothing is generated.
   */
  promptLogprobs?: number;
  /**
   * A structured output (JSON mode, a JSON Schema, a choice), enforced token by token where
   * the model samples; `field` is the request field that asked for it (a 400 about it names it).
   */
  structured?: { spec: StructuredOutputs; field: string };
  /**
   * vLLM's skip_special_tokens (default true). Reading tool calls turns it off, as vLLM's hermes
   * parser does: some models' <tool_call> tokens are special ones.
   */
  skipSpecialTokens?: boolean;
  /**
   * Called once when the generation ends, however it ends (done, failed, the consumer left),
   * with the tokens it used: the prompt's once the engine accepted it, and every token
   * generated. Not called when it was refused before the engine had it (nothing was used).
   */
  onUsage?: (usage: Usage) => void;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /**
   * As OpenAI's and vLLM's (with --enable-prompt-tokens-details): the prompt tokens the
   * engine's prefix cache served, when it reports them (an origin's usage chunk; not after
   * a stop string, which ends the origin's request before it).
   */
  prompt_tokens_details?: { cached_tokens: number };
}

/**
 * `accepted`: the engine has the request and nothing is decoded yet (at most once, first).
 * `text`: a delta; when logprobs or token ids were asked for, it carries those of the tokens
 * generated since the last one, in order — a stop token included — even where their text is
 * held back (a possible stop string, an unfinished UTF-8 character) and so is empty.
 * `prompt`: when the prompt's logprobs were asked for, once, before any text: one entry per
 * prompt token (the first has no logprob).
 * `stopReason` as vLLM's: the stop string that matched, or the stop token id that ended
 * generation (the model's EOS excepted: that is a plain "stop"); null otherwise.
 */
export type TextEvent =
  | { type: "accepted"; modelVersion?: string }
  | { type: "prompt"; logprobs: PromptTokenLogprobs[] }
  | { type: "text"; text: string; logprobs?: TokenLogprobs[]; tokenIds?: number[] }
  | { type: "done"; finishReason: FinishReason; stopReason: string | number | null; usage: Usage };

export interface PreparedPrompt {
  ids: number[];
}

export interface TextGenerator {
  readonly manifest: TextGenerationManifest;
  load(): Promise<void>;
  /**
   * Renders and tokenizes the prompt; 400 context_length_exceeded when it leaves no room.
   * `truncate` (vLLM's truncate_prompt_tokens): keep only the prompt's last this many tokens
   * (-1: as many as the context holds).
   */
  prepare(
    input: PromptInput,
    maxTokens: number | undefined,
    truncate?: number,
  ): Promise<PreparedPrompt>;
  /**
   * Perhaps `accepted` first (an origin answered; a stream may start), text deltas, then one
   * `done` event. Breaking out or aborting `signal` stops the generation.
   */
  generate(
    prompt: PreparedPrompt,
    options: GenerationOptions,
    signal: AbortSignal,
  ): AsyncGenerator<TextEvent>;
}
