// Hugging Face tokenizer.json loaded through @huggingface/tokenizers (pure JS), behind the
// TextTokenizer interface; it parses the whole JSON on load.
import { Tokenizer } from "@huggingface/tokenizers";
import type { TextTokenizer } from "./tokenizer";

interface TokenizerJson {
  model: unknown;
  added_tokens?: { special?: boolean }[];
}

/** Parses a verified tokenizer.json (bytes as stored) into a ready tokenizer. Decoding skips
 * transformers' clean_up_tokenization_spaces unless the config asks: the Rust decode has none.
 *
 * It gives the Rust `tokenizers` ids (checked on the held-out texts by
 * test/unit/tokenizers/tokenizer-parity.test.ts).
 */
export function loadTokenizer(
  tokenizerJson: Uint8Array,
  tokenizerConfig: Record<string, unknown> = { clean_up_tokenization_spaces: false },
): TextTokenizer {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(tokenizerJson));
  if (!isTokenizerJson(parsed)) throw new TypeError("tokenizer.json has no model section");
  return new HfTextTokenizer(parsed, tokenizerConfig);
}

function isTokenizerJson(value: unknown): value is TokenizerJson {
  return typeof value === "object" && value !== null && "model" in value;
}

class HfTextTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  private readonly tokenizer: Tokenizer;
  /**
   * Built on first use: the same tokenizer without its special tokens, so their strings stay text.
   */
  private plain: Tokenizer | undefined;

  constructor(
    private readonly json: TokenizerJson,
    private readonly config: Record<string, unknown>,
  ) {
    this.tokenizer = new Tokenizer(json, config);
    let size = 0;
    for (const id of this.tokenizer.get_vocab(true).values()) size = Math.max(size, id + 1);
    this.vocabSize = size;
  }

  encode(
    text: string,
    options: { addSpecialTokens?: boolean; parseSpecialTokens?: boolean } = {},
  ): number[] {
    const tokenizer = options.parseSpecialTokens === false ? this.plainTokenizer() : this.tokenizer;
    return tokenizer.encode(text, { add_special_tokens: options.addSpecialTokens ?? false }).ids;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return "";
    return this.tokenizer.decode([...ids], {
      skip_special_tokens: options.skipSpecialTokens ?? false,
    });
  }

  tokenToId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  private plainTokenizer(): Tokenizer {
    if (this.plain === undefined) {
      const added = (this.json.added_tokens ?? []).filter((token) => token.special !== true);
      this.plain = new Tokenizer({ ...this.json, added_tokens: added }, this.config);
    }
    return this.plain;
  }
}
