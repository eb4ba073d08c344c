// A request's structured output as the runtime contract carries it: the spec an origin is
// sent, and — for a loop that samples in this isolate — matchers over the model's vocabulary,
// whose trie is built once per tokenizer (so once per isolate), when first asked for.
import { shapeOf, TokenMatcher, VocabularyTrie, type StructuredOutputs } from "../../generation/structured/structured-outputs";
import type { GenerationRequest } from "../../runtime";
import type { TextTokenizer } from "../../tokenizers/tokenizer";

const tries = new WeakMap<TextTokenizer, { trie: VocabularyTrie; bytes: (id: number) => Uint8Array }>();

function vocabularyOf(text: TextTokenizer, vocabSize: number): { trie: VocabularyTrie; bytes: (id: number) => Uint8Array } {
  let vocabulary = tries.get(text);
  if (vocabulary === undefined) {
    // Special tokens have no bytes here: a grammar never allows them (stop ids aside).
    const pieces = text.tokenPieces?.({ skipSpecialTokens: true });
    if (pieces === undefined) throw new Error("Structured outputs need a tokenizer that gives each token's bytes");
    // 1 MiB of cached masks: for the tiny LLM, 2,048 states, against a 128 MB isolate.
    vocabulary = { trie: new VocabularyTrie(vocabSize, pieces, 1024 * 1024), bytes: pieces };
    tries.set(text, vocabulary);
  }
  return vocabulary;
}

export function structuredConstraint(spec: StructuredOutputs, text: TextTokenizer, vocabSize: number): NonNullable<GenerationRequest["structured"]> {
  return {
    spec,
    matcher: () => {
      const { trie, bytes } = vocabularyOf(text, vocabSize);
      return new TokenMatcher(shapeOf(spec), trie, bytes);
    },
  };
}
