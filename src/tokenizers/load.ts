// Loads verified tokenizer bytes behind the TextTokenizer interface: a minimal adapter over
// @huggingface/tokenizers with the tokenizers branch's loader signature (at merge, that
// branch's load.ts — compact form or tokenizer.json — replaces this file).
import { Tokenizer } from "@huggingface/tokenizers";
import type { TextTokenizer } from "./tokenizer";

interface TokenizerJson {
  model: unknown;
  added_tokens?: { special?: boolean }[];
}

function parseTokenizerJson(bytes: Uint8Array): TokenizerJson {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes));
  if (typeof parsed !== "object" || parsed === null || !("model" in parsed)) throw new TypeError("tokenizer.json has no model section");
  return parsed;
}

/** Loads a verified tokenizer.json (`file` is the manifest's name for it). As in the Rust
 * crate's encode_special_tokens, parseSpecialTokens: false leaves *special* tokens as text
 * (a second instance without them, built on first use); other added tokens still match.
 * Decoding skips transformers' clean_up_tokenization_spaces: the Rust decode has none. */
export function loadTextTokenizer(file: string, bytes: Uint8Array): TextTokenizer {
  if (!file.endsWith(".json")) throw new TypeError(`${file}: only tokenizer.json loads here`);
  const config = { clean_up_tokenization_spaces: false };
  const json = parseTokenizerJson(bytes);
  const tokenizer = new Tokenizer(json, config);
  const special = [...tokenizer.get_added_tokens_decoder().values()].filter((token) => token.special).map((token) => token.content);
  let plain: Tokenizer | undefined;
  let vocabSize = 0;
  for (const id of tokenizer.get_vocab(true).values()) vocabSize = Math.max(vocabSize, id + 1);
  return {
    vocabSize,
    encode(text, options = {}) {
      const addSpecialTokens = options.addSpecialTokens ?? false;
      const asText = options.parseSpecialTokens === false && special.some((token) => text.includes(token));
      if (asText) plain ??= new Tokenizer({ ...json, added_tokens: (json.added_tokens ?? []).filter((token) => token.special !== true) }, config);
      return (asText && plain !== undefined ? plain : tokenizer).encode(text, { add_special_tokens: addSpecialTokens }).ids;
    },
    decode(ids, options = {}) {
      if (ids.length === 0) return "";
      return tokenizer.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false });
    },
    tokenToId: (token) => tokenizer.token_to_id(token),
  };
}
