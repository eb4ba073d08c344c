// A request's next token: sampled from its logits row with its own PRNG under its constraints, and
// the step that says whether it ends the request.
import { tokenLogprob, type TokenLogprob } from "../../../src/generation/logprobs";
import { sample } from "../../../src/generation/sampler";
import type { GenerationStep } from "./generation-params";
import type { DecodeRequest } from "./request";

const NO_IDS: ReadonlySet<number> = new Set();

/**
 * A request's next token: sampled from its logits row with its own PRNG (EOS and its stop ids held
 * back until min_tokens; a structured output's mask keeping only the ids it allows), then the step
 * that carries it out, which says whether it ends the request (EOS, one of its stop ids, a
 * structured output after which nothing may follow, max_tokens, or the context's end) and, when
 * asked, carries its logprob and, on the first step, the prompt's.
 *
 * Samples the request's next token from its logits row (and adds it to its history, when a penalty
 * reads it).
 */
export function sampleNext(
  request: DecodeRequest,
  logits: Float32Array,
  eos: ReadonlySet<number>,
): number {
  const { params } = request;
  const suppressed =
    request.generated.length < params.minTokens
      ? (request.suppressed ??= new Set(
          params.ignoreEos ? params.stopTokenIds : [...eos, ...params.stopTokenIds],
        ))
      : NO_IDS;
  const tokenId = sample(
    logits,
    params.sampling,
    request.rng,
    suppressed,
    request.history,
    request.constraint?.next(),
  );
  request.history?.add(tokenId);
  request.constraint?.accept(tokenId);
  return tokenId;
}

/**
 * The step that sends out `tokenId`, once it is the last of `request.generated`: its finish
 * and stop reasons, the cached prompt tokens on the first step, and the logprobs asked for.
 */
export function stepOf(
  request: DecodeRequest,
  tokenId: number,
  logits: Float32Array,
  eos: ReadonlySet<number>,
  contextLength: number,
  prompt?: Array<TokenLogprob | null>,
): GenerationStep {
  const { params } = request;
  const { constraint } = request;
  let finishReason: "stop" | "length" | null = null;
  let stopReason: number | null = null;
  // A complete structured output's stop id ends it even before min_tokens (its mask left nothing
  // else).
  const mayStop = request.generated.length >= params.minTokens || constraint?.complete === true;
  if (mayStop && !params.ignoreEos && eos.has(tokenId)) finishReason = "stop";
  else if (mayStop && params.stopTokenIds.includes(tokenId))
    [finishReason, stopReason] = ["stop", tokenId];
  // Complete with no stop id to end it (ignore_eos): the token that completed it ends the request.
  else if (constraint?.ended === true) finishReason = "stop";
  else if (request.generated.length >= params.maxTokens || request.filled + 1 >= contextLength)
    finishReason = "length";
  const step: GenerationStep =
    request.generated.length === 1
      ? { tokenId, finishReason, stopReason, cachedTokens: request.cachedTokens }
      : { tokenId, finishReason, stopReason };
  // vLLM's default raw_logprobs: the row the sampler read, before its bias, penalties and
  // temperature.
  if (params.logprobs !== undefined) step.logprob = tokenLogprob(logits, tokenId, params.logprobs);
  if (prompt !== undefined) step.promptLogprobs = prompt;
  return step;
}
