// One request's structured output inside the engine: the ids that may come next (vLLM's
// grammar bitmask, computed once per step from the matcher's state) and the ids that end the
// request, allowed only once the output is complete. Only constrained requests have one.
import { ServiceError } from "../../../src/errors/service-error";
import {
  SchemaError,
  type TokenMatcher,
} from "../../../src/generation/structured/structured-outputs";
import type { GenerationParams } from "./generation-params";
import type { Vocabulary } from "./vocabulary";

export class Constraint {
  private mask: Uint8Array | undefined;

  /**
   * @param stopIds the ids that end the request (EOS unless ignore_eos, and its stop_token_ids)
   * @param allowedIds vLLM's allowed_token_ids as a mask, when set: the two masks meet
   */
  constructor(
    private readonly matcher: TokenMatcher,
    private readonly stopIds: readonly number[],
    private readonly allowedIds: Uint8Array | undefined,
  ) {}

  /** Whether the output is complete (a stop id may end it now). */
  get complete(): boolean {
    return this.matcher.complete;
  }

  /** The next token's mask: 1 where an id may come next. */
  next(): Uint8Array {
    if (this.mask !== undefined) return this.mask;
    let shared: Uint8Array;
    try {
      shared = this.matcher.allowed(this.stopIds);
    } catch (error) {
      // An output open too many ways fails its own request, not the batch.
      if (error instanceof SchemaError)
        throw new ServiceError(400, "invalid_request", `structured_outputs: ${error.message}`, {
          field: "structured_outputs",
        });
      throw error;
    }
    // The matcher's mask may be its trie's cached one: met with allowed_token_ids on a copy.
    const mask = this.allowedIds === undefined ? shared : Uint8Array.from(shared);
    if (this.allowedIds !== undefined)
      for (let id = 0; id < mask.length; id++) mask[id]! &= this.allowedIds[id] ?? 0;
    this.mask = mask;
    return mask;
  }

  /** Whether nothing may follow: the output ends where it is. */
  get ended(): boolean {
    return !this.next().includes(1);
  }

  /** Takes the sampled id (a stop id changes nothing). */
  accept(id: number): void {
    if (this.matcher.accept(id)) this.mask = undefined;
  }
}

/**
 * The constraint of a request that asked for a structured output (undefined for one that did
 * not: it pays nothing). Its stop ids are the ids that end it: EOS (the model's stop ids)
 * unless ignore_eos, and its own stop_token_ids.
 */
export function constraintOf(
  params: GenerationParams,
  vocabulary: Vocabulary | undefined,
  eos: ReadonlySet<number>,
  modelName: string,
): Constraint | undefined {
  const spec = params.structuredOutputs;
  if (spec === undefined) return undefined;
  if (vocabulary === undefined)
    throw new ServiceError(
      400,
      "invalid_request",
      `Model "${modelName}" has no token vocabulary for structured outputs`,
      { field: "structured_outputs" },
    );
  const stopIds = params.ignoreEos ? params.stopTokenIds : [...eos, ...params.stopTokenIds];
  const allowed = params.sampling.allowedTokenIds;
  let allowedIds: Uint8Array | undefined;
  if (allowed !== undefined) {
    allowedIds = new Uint8Array(vocabulary.size);
    for (const id of allowed) allowedIds[id] = 1;
  }
  const constraint = new Constraint(vocabulary.matcher(spec), stopIds, allowedIds);
  // A continued generation: its automaton starts where the output so far leaves it.
  const prefix = params.outputPrefixTokens ?? 0;
  for (const id of params.promptIds.slice(params.promptIds.length - prefix)) {
    if (constraint.next()[id] !== 1)
      throw new ServiceError(
        400,
        "invalid_request",
        `output_prefix_tokens: token ${id} of the output so far does not follow structured_outputs`,
        { field: "output_prefix_tokens" },
      );
    constraint.accept(id);
  }
  return constraint;
}
