// The tokenizer interface the edge programs against (CONTRACTS.md), and a minimal adapter
// over @huggingface/tokenizers until the tokenizers branch's compact form lands (at merge,
// that branch's file replaces this one).
import { Tokenizer } from "@huggingface/tokenizers";

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

function parseTokenizerJson(bytes: Uint8Array): object {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes));
  if (typeof parsed !== "object" || parsed === null || !("model" in parsed)) throw new TypeError("tokenizer.json has no model section");
  return parsed;
}

/** A TextTokenizer over @huggingface/tokenizers. Added tokens as plain text come from a second
 * instance built without them, made on first use. Decoding skips transformers'
 * clean_up_tokenization_spaces: the Rust `tokenizers` decode (the reference) has none. */
export function loadTextTokenizer(tokenizerJson: Uint8Array, config: Record<string, unknown> = {}): TextTokenizer {
  const tokenizerConfig = { ...config, clean_up_tokenization_spaces: false };
  const json = parseTokenizerJson(tokenizerJson);
  const tokenizer = new Tokenizer(json, tokenizerConfig);
  const added = tokenizer.get_added_tokens_decoder();
  const addedTokens = [...added.values()].map((token) => token.content);
  let plain: Tokenizer | undefined;
  let vocabSize = 0;
  for (const id of tokenizer.get_vocab(true).values()) vocabSize = Math.max(vocabSize, id + 1);
  return {
    vocabSize,
    encode(text, options = {}) {
      const addSpecialTokens = options.addSpecialTokens ?? false;
      if (options.parseSpecialTokens === false && addedTokens.some((token) => text.includes(token))) {
        plain ??= new Tokenizer({ ...json, added_tokens: [] }, tokenizerConfig);
        const ids = plain.encode(text, { add_special_tokens: false }).ids;
        if (!addSpecialTokens) return ids;
        const bare = tokenizer.encode("a", { add_special_tokens: false }).ids;
        const wrapped = tokenizer.encode("a", { add_special_tokens: true }).ids;
        const at = wrapped.findIndex((_, index) => bare.every((id, offset) => wrapped[index + offset] === id));
        return at === -1 ? ids : [...wrapped.slice(0, at), ...ids, ...wrapped.slice(at + bare.length)];
      }
      return tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids;
    },
    decode(ids, options = {}) {
      if (ids.length === 0) return "";
      return tokenizer.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false });
    },
    tokenToId: (token) => tokenizer.token_to_id(token),
  };
}
