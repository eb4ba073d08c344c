// TextTokenizer (src/tokenizers/tokenizer.ts) over @huggingface/tokenizers, for generation.
// A stand-in until the tokenizers helper's implementation lands; its file wins at merge.
import { loadTokenizer, type Tokenizer } from "./hf-tokenizer";
import type { TextTokenizer } from "./tokenizer";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Wraps a parsed tokenizer.json. */
export function hfTextTokenizer(tokenizer: Tokenizer): TextTokenizer {
  const special = [...tokenizer.get_added_tokens_decoder().values()].map((token) => token.content).filter((content) => content.length > 1);
  const specialPattern = special.length === 0 ? undefined : new RegExp(`(${special.map(escapeRegExp).join("|")})`);
  const vocabSize = Math.max(0, ...[...tokenizer.get_added_tokens_decoder().keys()].map((id) => id + 1), tokenizerSize(tokenizer));
  const encodeText = (text: string, addSpecialTokens: boolean) => (text === "" ? [] : tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids);
  return {
    vocabSize,
    encode(text, { addSpecialTokens = false, parseSpecialTokens = true } = {}) {
      if (parseSpecialTokens || specialPattern === undefined) return encodeText(text, addSpecialTokens);
      // Special-token strings in untrusted text stay text: each is encoded in two pieces,
      // which can never merge back into the special id.
      const ids = text.split(specialPattern).flatMap((piece, i) =>
        i % 2 === 1 ? [...encodeText(piece.slice(0, 1), false), ...encodeText(piece.slice(1), false)] : encodeText(piece, false),
      );
      return addSpecialTokens ? [...encodeText("", true), ...ids] : ids;
    },
    decode: (ids, { skipSpecialTokens = false } = {}) => (ids.length === 0 ? "" : tokenizer.decode([...ids], { skip_special_tokens: skipSpecialTokens })),
    tokenToId: (token) => tokenizer.token_to_id(token),
  };
}

function tokenizerSize(tokenizer: Tokenizer): number {
  let size = 0;
  while (tokenizer.id_to_token(size) !== undefined) size += 1024;
  while (size > 0 && tokenizer.id_to_token(size - 1) === undefined) size -= 1;
  return size;
}

/** Parses a verified tokenizer.json into a TextTokenizer. */
export function loadTextTokenizer(tokenizerJson: Uint8Array): TextTokenizer {
  return hfTextTokenizer(loadTokenizer(tokenizerJson));
}
