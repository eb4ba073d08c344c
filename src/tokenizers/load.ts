// Picks the tokenizer implementation from the file a manifest names: the compact form
// (tokenizer.bin, built by scripts/build-tokenizer.mjs) or a Hugging Face tokenizer.json.
import { CompactTokenizer } from "./compact-tokenizer";
import { loadTokenizer } from "./hf-tokenizer";
import type { TextTokenizer } from "./tokenizer";

/** Loads verified tokenizer bytes; `file` is the manifest's name for them. */
export function loadTextTokenizer(file: string, bytes: Uint8Array): TextTokenizer {
  if (file.endsWith(".bin")) return new CompactTokenizer(aligned(bytes));
  return loadTokenizer(bytes);
}

/** The compact form is viewed as 32-bit arrays: copy only if the bytes are not 8-byte aligned. */
function aligned(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
}
