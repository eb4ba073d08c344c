// Incremental detokenization for streaming, as vLLM and TGI do it: text is decoded from a
// small window of ids (prefix offset … end) and only what extends the window's previous
// text is emitted, and only once it no longer ends in U+FFFD (an unfinished UTF-8
// character split across tokens). Deltas joined equal the full decode: the window always
// starts at a token boundary the previous decode already covered.
import type { TextTokenizer } from "./tokenizer";

export interface StreamDetokenizer {
  /** Adds ids; returns the text they complete (possibly ""). */
  push(ids: readonly number[]): string;
  /** The text still held back (an incomplete character at the very end), for the last delta. */
  flush(): string;
  /** Every id pushed so far. */
  readonly ids: readonly number[];
}

/** `prompt` ids (optional) give the first tokens their left context, as vLLM does. */
export function streamDetokenizer(tokenizer: TextTokenizer, { skipSpecialTokens = true }: { skipSpecialTokens?: boolean } = {}): StreamDetokenizer {
  const ids: number[] = [];
  let prefixOffset = 0;
  let readOffset = 0;
  const decode = (from: number, to: number) => tokenizer.decode(ids.slice(from, to), { skipSpecialTokens });
  return {
    ids,
    push(newIds) {
      ids.push(...newIds);
      const prefixText = decode(prefixOffset, readOffset);
      const text = decode(prefixOffset, ids.length);
      if (text.length > prefixText.length && !text.endsWith("\uFFFD") && text.startsWith(prefixText)) {
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
