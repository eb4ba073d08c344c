// Incremental detokenization for streaming, so that the deltas joined equal the full decode byte
// for byte.
import type { TextTokenizer } from "./tokenizer";

export interface StreamDetokenizer {
  /** Adds ids; returns the text they complete (possibly ""). */
  push(ids: readonly number[]): string;
  /** The text still held back (an incomplete character at the very end), for the last delta. */
  flush(): string;
  /** Every id pushed so far. */
  readonly ids: readonly number[];
}

/**
 * Byte-level tokenizers (the compact form's `tokenPieces`) decode each token once: its bytes go
 * through one streaming UTF-8 decoder, which holds back an unfinished character and emits U+FFFD
 * exactly where a decode of the whole sequence would. Other tokenizers (SentencePiece chains that
 * strip or fuse, @huggingface/tokenizers) use vLLM's window (detokenize_incrementally): decode
 * prefix offset … end, emit what extends the window's previous text once it no longer ends in
 * U+FFFD.
 */
export function streamDetokenizer(
  tokenizer: TextTokenizer,
  { skipSpecialTokens = true }: { skipSpecialTokens?: boolean } = {},
): StreamDetokenizer {
  const pieces = tokenizer.tokenPieces?.({ skipSpecialTokens });
  return pieces === undefined
    ? windowDetokenizer(tokenizer, skipSpecialTokens)
    : byteDetokenizer(pieces);
}

/** One pass: each token's bytes into a streaming UTF-8 decoder (ignoreBOM, as the full decode). */
function byteDetokenizer(pieces: (id: number) => Uint8Array): StreamDetokenizer {
  const ids: number[] = [];
  const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  return {
    ids,
    push(newIds) {
      let text = "";
      for (const id of newIds) {
        ids.push(id);
        const bytes = pieces(id);
        if (bytes.length > 0) text += utf8.decode(bytes, { stream: true });
      }
      return text;
    },
    flush() {
      return utf8.decode();
    },
  };
}

/** vLLM's prefix/read offsets over a window of ids, two decodes per push. */
function windowDetokenizer(
  tokenizer: TextTokenizer,
  skipSpecialTokens: boolean,
): StreamDetokenizer {
  const ids: number[] = [];
  let prefixOffset = 0;
  let readOffset = 0;
  const decode = (from: number, to: number) =>
    tokenizer.decode(ids.slice(from, to), { skipSpecialTokens });
  return {
    ids,
    push(newIds) {
      ids.push(...newIds);
      const prefixText = decode(prefixOffset, readOffset);
      const text = decode(prefixOffset, ids.length);
      if (
        text.length > prefixText.length &&
        !text.endsWith("\uFFFD") &&
        text.startsWith(prefixText)
      ) {
        prefixOffset = readOffset;
        readOffset = ids.length;
        return text.slice(prefixText.length);
      }
      return "";
    },
    flush() {
      const prefixText = decode(prefixOffset, readOffset);
      const text = decode(prefixOffset, ids.length);
      prefixOffset = readOffset = ids.length;
      return text.startsWith(prefixText) ? text.slice(prefixText.length) : "";
    },
  };
}
