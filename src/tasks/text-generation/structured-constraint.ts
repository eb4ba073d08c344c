// A request's structured output as the runtime contract carries it: the spec an origin is
// sent, and — for a loop that samples in this isolate — matchers over the model's vocabulary,
// whose trie is built once per tokenizer (so once per isolate), when first asked for.
import { memoWeak } from "../../memos";
import { ServiceError } from "../../errors/service-error";
import {
  SchemaError,
  shapeOf,
  TokenMatcher,
  VocabularyTrie,
  type StructuredOutputs,
} from "../../generation/structured/structured-outputs";
import type { GenerationRequest } from "../../runtime";
import type { TextTokenizer } from "../../tokenizers/tokenizer";

const tries = memoWeak<TextTokenizer, { trie: VocabularyTrie; bytes: (id: number) => Uint8Array }>(
  "text-generation.vocabulary",
);

function vocabularyOf(
  text: TextTokenizer,
  vocabSize: number,
): { trie: VocabularyTrie; bytes: (id: number) => Uint8Array } {
  let vocabulary = tries.get(text);
  if (vocabulary === undefined) {
    // Special tokens have no bytes here: a grammar never allows them (stop ids aside).
    const pieces = text.tokenPieces?.({ skipSpecialTokens: true });
    if (pieces === undefined)
      throw new Error("Structured outputs need a tokenizer that gives each token's bytes");
    // 1 MiB of cached masks: for the tiny LLM, 2,048 states, against a 128 MB isolate.
    vocabulary = { trie: new VocabularyTrie(vocabSize, pieces, 1024 * 1024), bytes: pieces };
    tries.set(text, vocabulary);
  }
  return vocabulary;
}

/**
 * A matcher whose refusal mid-generation (an output open too many ways) is a 400 naming the
 * request's field.
 */
class RequestMatcher extends TokenMatcher {
  constructor(
    spec: StructuredOutputs,
    vocabulary: { trie: VocabularyTrie; bytes: (id: number) => Uint8Array },
    private readonly field: string,
  ) {
    super(shapeOf(spec), vocabulary.trie, vocabulary.bytes);
  }

  override allowed(stopIds: Iterable<number>): Uint8Array {
    try {
      return super.allowed(stopIds);
    } catch (error) {
      if (error instanceof SchemaError)
        throw new ServiceError(400, "invalid_request", `${this.field}: ${error.message}`, {
          field: this.field,
        });
      throw error;
    }
  }
}

/** `field`: the request field that asked for the constraint. */
export function structuredConstraint(
  spec: StructuredOutputs,
  field: string,
  text: TextTokenizer,
  vocabSize: number,
): NonNullable<GenerationRequest["structured"]> {
  return { spec, matcher: () => new RequestMatcher(spec, vocabularyOf(text, vocabSize), field) };
}
