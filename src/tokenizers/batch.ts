// Truncation, padding and attention masks: turns texts into the [batch, seq] int64
// tensors a text model takes, exactly as the training script prepared them.
import type { TextTokenizer } from "./tokenizer";

export interface BatchEncodingOptions {
  /** Characters kept per text before tokenizing (bounds the cost of a huge text). */
  maxChars: number;
  /** Ids kept per text: the first maxLength. */
  maxLength: number;
  padTokenId: number;
}

export interface BatchEncoding {
  inputIds: BigInt64Array;
  attentionMask: BigInt64Array;
  /** [batch, sequence]; sequence is the longest kept length in the batch. */
  shape: [number, number];
  /** Ids kept per text after truncation. */
  tokenCounts: number[];
  /** Whether a text lost characters or ids to the limits. */
  truncated: boolean[];
}

/** Encodes one text the way the model was trained: slice, tokenize, keep the first ids. */
export function encodeText(
  tokenizer: TextTokenizer,
  text: string,
  options: BatchEncodingOptions,
): { ids: number[]; truncated: boolean } {
  const kept = text.slice(0, options.maxChars);
  const ids = tokenizer.encode(kept);
  return {
    ids: ids.slice(0, options.maxLength),
    truncated: kept.length < text.length || ids.length > options.maxLength,
  };
}

/** Encodes texts and pads them to the longest, with a 1/0 attention mask. */
export function encodeBatch(
  tokenizer: TextTokenizer,
  texts: readonly string[],
  options: BatchEncodingOptions,
): BatchEncoding {
  const encoded = texts.map((text) => encodeText(tokenizer, text, options));
  // A text that tokenizes to nothing still gets one (padding) position so shapes stay valid.
  const sequence = Math.max(1, ...encoded.map(({ ids }) => ids.length));
  const inputIds = new BigInt64Array(texts.length * sequence).fill(BigInt(options.padTokenId));
  const attentionMask = new BigInt64Array(texts.length * sequence);
  encoded.forEach(({ ids }, row) => {
    ids.forEach((id, column) => {
      inputIds[row * sequence + column] = BigInt(id);
      attentionMask[row * sequence + column] = 1n;
    });
  });
  return {
    inputIds,
    attentionMask,
    shape: [texts.length, sequence],
    tokenCounts: encoded.map(({ ids }) => ids.length),
    truncated: encoded.map(({ truncated }) => truncated),
  };
}
