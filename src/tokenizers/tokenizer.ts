// The tokenizer interface the edge programs against (CONTRACTS.md). The tokenizers branch
// owns this file: at merge, its version replaces this copy.

export interface TextTokenizer {
  readonly vocabSize: number;
  /** addSpecialTokens: BOS/EOS per the tokenizer's post-processor (default false).
   *  parseSpecialTokens: whether special/added-token strings in the text become their
   *  ids (default true); false makes them plain text (user content in chat prompts). */
  encode(text: string, options?: { addSpecialTokens?: boolean; parseSpecialTokens?: boolean }): number[];
  /** skipSpecialTokens default false. Matches the Rust `tokenizers` decode. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  tokenToId(token: string): number | undefined;
}
