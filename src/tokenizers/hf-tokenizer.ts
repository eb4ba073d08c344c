// Hugging Face tokenizer.json loading: the pure-JS port gives the same ids as the Rust
// `tokenizers` crate (checked on the held-out texts by test/unit/tokenizer-parity.test.ts).
import { Tokenizer } from "@huggingface/tokenizers";

export type { Tokenizer };

/** Parses a verified tokenizer.json (bytes as stored) into a ready tokenizer. */
export function loadTokenizer(tokenizerJson: Uint8Array, tokenizerConfig: Record<string, unknown> = {}): Tokenizer {
  const parsed: unknown = JSON.parse(new TextDecoder().decode(tokenizerJson));
  if (typeof parsed !== "object" || parsed === null || !("model" in parsed)) {
    throw new TypeError("tokenizer.json has no model section");
  }
  return new Tokenizer(parsed, tokenizerConfig);
}
