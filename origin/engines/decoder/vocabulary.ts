// A decoder's vocabulary as structured outputs read it: each id's bytes and the trie every
// constrained row's mask walks.
import {
  shapeOf,
  TokenMatcher,
  VocabularyTrie,
  type StructuredOutputs,
} from "../../../src/generation/structured/structured-outputs";
import { loadTextTokenizer } from "../../../src/tokenizers/load";

/** A tokenizer file as the manifest names it, its bytes verified. */
export interface TokenizerFile {
  file: string;
  bytes: Uint8Array;
}

/**
 * Each id's bytes (special tokens empty) and, built on the first constrained request, the
 * trie the masks walk. One per engine, on the engine's thread (an output open more ways than
 * the core's MAX_OPEN_WAYS fails alone: see constraint.ts).
 */
export class Vocabulary {
  private built: VocabularyTrie | undefined;

  constructor(
    readonly size: number,
    readonly pieces: (id: number) => Uint8Array,
  ) {}

  /**
   * A new matcher for one request's constraint (its schema compiled again: shapes do not cross
   * threads).
   */
  matcher(spec: StructuredOutputs): TokenMatcher {
    this.built ??= new VocabularyTrie(this.size, this.pieces);
    return new TokenMatcher(shapeOf(spec), this.built, this.pieces);
  }
}

/**
 * The vocabulary of a model's tokenizer; undefined where the tokenizer cannot give its tokens'
 * bytes.
 */
export function loadVocabulary(tokenizer: TokenizerFile, size: number): Vocabulary | undefined {
  const pieces = loadTextTokenizer(tokenizer.file, tokenizer.bytes).tokenPieces?.({
    skipSpecialTokens: true,
  });
  return pieces === undefined ? undefined : new Vocabulary(size, pieces);
}
