// A decoder's vocabulary as structured outputs read it: each id's bytes (from the model's
// tokenizer, special tokens empty) and, built on the first constrained request, the trie
// every constrained row's mask walks. One per engine, on the engine's thread. The walk costs
// one pass over the trie per way the output stands open (the automaton's live stacks: a
// union's options that all take the bytes so far), so an output open more ways than
// MAX_OPEN_WAYS fails alone, with a 400, before its walk; a 32 KiB schema of ambiguous unions
// can otherwise hold thousands open and stall every row of the batch for seconds a step.
import { ServiceError } from "../../../src/errors/service-error";
import type { Stack } from "../../../src/generation/structured/json-bytes";
import { shapeOf, TokenMatcher, VocabularyTrie, type StructuredOutputs } from "../../../src/generation/structured/structured-outputs";
import { loadTextTokenizer } from "../../../src/tokenizers/load";

/** The most ways a structured output may stand open at once. */
export const MAX_OPEN_WAYS = 64;

/** A tokenizer file as the manifest names it, its bytes verified. */
export interface TokenizerFile {
  file: string;
  bytes: Uint8Array;
}

/** The trie, refusing to walk for an output open more ways than MAX_OPEN_WAYS. */
class BoundedTrie extends VocabularyTrie {
  override mark(states: readonly Stack[], mask: Uint8Array): void {
    if (states.length > MAX_OPEN_WAYS) {
      const detail = `structured_outputs: the schema leaves ${states.length} ways open at once here, over this origin's limit of ${MAX_OPEN_WAYS} (anyOf options that start alike stay open together)`;
      throw new ServiceError(400, "invalid_request", detail, { field: "structured_outputs" });
    }
    super.mark(states, mask);
  }
}

export class Vocabulary {
  private built: VocabularyTrie | undefined;

  constructor(
    readonly size: number,
    readonly pieces: (id: number) => Uint8Array,
  ) {}

  /** A new matcher for one request's constraint (its schema compiled again: shapes do not cross threads). */
  matcher(spec: StructuredOutputs): TokenMatcher {
    this.built ??= new BoundedTrie(this.size, this.pieces);
    return new TokenMatcher(shapeOf(spec), this.built, this.pieces);
  }
}

/** The vocabulary of a model's tokenizer; undefined where the tokenizer cannot give its tokens' bytes. */
export function loadVocabulary(tokenizer: TokenizerFile, size: number): Vocabulary | undefined {
  const pieces = loadTextTokenizer(tokenizer.file, tokenizer.bytes).tokenPieces?.({ skipSpecialTokens: true });
  return pieces === undefined ? undefined : new Vocabulary(size, pieces);
}
