// The tokenizer interface the edge codes against, whichever implementation loads behind it: the
// compact binary form, or @huggingface/tokenizers over tokenizer.json.

export interface EncodeOptions {
  /** BOS/EOS per the tokenizer's post-processor (default false). */
  addSpecialTokens?: boolean;
  /** Whether special/added-token strings in the text become their ids (default true);
   *  false makes special tokens plain text (user content in chat prompts). */
  parseSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Drop special tokens from the text (default false). */
  skipSpecialTokens?: boolean;
}

export interface TextTokenizer {
  readonly vocabSize: number;
  /** addSpecialTokens: BOS/EOS per the tokenizer's post-processor (default false).
   *  parseSpecialTokens: whether special/added-token strings in the text become their
   *  ids (default true); false makes them plain text (user content in chat prompts). */
  encode(
    text: string,
    options?: { addSpecialTokens?: boolean; parseSpecialTokens?: boolean },
  ): number[];
  /** skipSpecialTokens default false. Matches the Rust `tokenizers` decode. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  tokenToId(token: string): number | undefined;
  /** Where decode is exactly UTF-8 over the concatenated bytes of each token (byte-level BPE),
   *  each id's bytes: the streaming detokenizer then decodes each token once. Else undefined. */
  tokenPieces?(options?: { skipSpecialTokens?: boolean }): ((id: number) => Uint8Array) | undefined;
}
