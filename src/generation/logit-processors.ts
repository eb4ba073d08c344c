// The logits adjusted before sampling, in vLLM's order: the allowed ids (and a structured
// output's mask), the logit bias, then the penalties with the history they read.
import type { SamplingParams } from "./sampling-params";

/** Whether any penalty is set: then the sampler needs the request's TokenHistory. */
export function hasPenalties(params: SamplingParams): boolean {
  return (
    (params.presencePenalty ?? 0) !== 0 ||
    (params.frequencyPenalty ?? 0) !== 0 ||
    (params.repetitionPenalty ?? 1) !== 1
  );
}

/** What the penalties read: which ids the prompt holds and how often each was generated. */
export class TokenHistory {
  private readonly prompt: ReadonlySet<number>;
  /** Generated ids and their counts, in the order first generated. */
  readonly counts = new Map<number, number>();

  constructor(promptIds: Iterable<number>) {
    this.prompt = new Set(promptIds);
  }

  /** Records a generated id. */
  add(id: number): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }

  /** The ids the repetition penalty reaches: the prompt's and the generated ones. */
  *seen(): Iterable<number> {
    yield* this.prompt;
    for (const id of this.counts.keys()) if (!this.prompt.has(id)) yield id;
  }
}

/**
 * The logits adjusted as below (a float64 copy): the allowed ids, the logit bias,
 * then the penalties when a history is given; the same logits when there is nothing to apply.
 *
 * Applied first, on a float64 copy of the logits (when any of these is set), in vLLM's order (its
 * logit-bias processor, then apply_penalties; before temperature, greedy included):
 *   0. allowed ids: every id a structured output's mask (this step's, vLLM's grammar bitmask) or
 *      vLLM's allowed_token_ids leaves out gets -Infinity;
 *   0'. logit bias: each listed id's bias is added to its logit;
 *   penalties (with the request's history):
 *   a. repetition (≠ 1): each id in the prompt or generated so far: a logit > 0 is multiplied by
 *      1 / penalty, any other by the penalty (CTRL's; the prompt counts);
 *   b. frequency and presence: each id generated so far (the prompt does not count) loses
 *      frequency × its count, then presence once (OpenAI's definition).
 */
export function adjustLogits(
  logits: ArrayLike<number>,
  params: SamplingParams,
  history?: TokenHistory,
  mask?: Uint8Array,
): ArrayLike<number> {
  const bias = params.logitBias ?? [];
  const penalties = history !== undefined && hasPenalties(params);
  const allowed = params.allowedTokenIds;
  if (bias.length === 0 && !penalties && allowed === undefined && mask === undefined) return logits;
  let out: Float64Array;
  if (allowed === undefined) out = Float64Array.from(logits);
  else {
    out = new Float64Array(logits.length).fill(-Infinity);
    for (const id of allowed) if (id >= 0 && id < out.length) out[id] = logits[id]!;
  }
  if (mask !== undefined)
    for (let id = 0; id < out.length; id++) if (mask[id] !== 1) out[id] = -Infinity;
  for (const [id, value] of bias) if (id >= 0 && id < out.length) out[id] = out[id]! + value;
  if (penalties) penalize(out, params, history);
  return out;
}

/** The penalties, in place. */
function penalize(out: Float64Array, params: SamplingParams, history: TokenHistory): void {
  const repetition = params.repetitionPenalty ?? 1;
  if (repetition !== 1) {
    const [above, below] = [1 / repetition, repetition];
    for (const id of history.seen())
      if (id >= 0 && id < out.length) out[id] = out[id]! * (out[id]! > 0 ? above : below);
  }
  const [frequency, presence] = [params.frequencyPenalty ?? 0, params.presencePenalty ?? 0];
  if (frequency !== 0 || presence !== 0) {
    for (const [id, count] of history.counts)
      if (id >= 0 && id < out.length) out[id] = out[id]! - frequency * count - presence;
  }
}
