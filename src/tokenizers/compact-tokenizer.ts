// The edge tokenizer: loads the compact form (views over the file's bytes, no vocabulary parsing)
// and encodes/decodes BPE tokenizers as the Rust `tokenizers` crate does.
import { memoMap } from "../memos";
import { AddedTokenMatcher, addedTokens, type AddedToken } from "./added-tokens";
import { BpeModel } from "./bpe";
import { readCompact, type CompactHeader, type CompactVocab } from "./compact-format";
import { ChunkDecoder } from "./decode";
import { compilePreTokenizer, normalize, type CompiledPreTokenizer } from "./pre-tokenize";
import type { TextTokenizer } from "./tokenizer";

/**
 * Byte-level and SentencePiece-style with byte fallback. Proven against the Rust binding by
 * test/slow/compact-tokenizer-parity.test.ts.
 */
export class CompactTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  /** Ids of the tokenizer_config.json's bos/eos/pad tokens (null when it names none). */
  readonly config: CompactHeader["config"];
  private readonly header: CompactHeader;
  private readonly vocab: CompactVocab;
  private readonly bpe: BpeModel;
  private readonly rawMatcher: AddedTokenMatcher;
  private readonly normalizedMatcher: AddedTokenMatcher;
  private readonly preTokenize: CompiledPreTokenizer;
  private readonly decoder: ChunkDecoder;
  private readonly addedById = new Map<number, AddedToken>();
  private readonly addedByContent = new Map<string, number>();

  constructor(bytes: ArrayBuffer | Uint8Array) {
    const { header, vocab } = readCompact(bytes);
    this.header = header;
    this.vocab = vocab;
    this.config = header.config;
    this.bpe = new BpeModel(vocab, header.model);
    const { raw, normalized } = addedTokens(header.added);
    this.rawMatcher = new AddedTokenMatcher(raw);
    this.normalizedMatcher = new AddedTokenMatcher(
      normalized.map((t) => ({ ...t, content: normalize(t.content, header.normalizer) })),
    );
    for (const token of [...raw, ...normalized]) {
      this.addedById.set(token.id, token);
      this.addedByContent.set(token.content, token.id);
    }
    this.preTokenize = compilePreTokenizer(header.preTokenizer);
    this.decoder = new ChunkDecoder(vocab, header.model, header.decoder, [...raw, ...normalized]);
    let size = header.model.size;
    for (const id of this.addedById.keys()) size = Math.max(size, id + 1);
    this.vocabSize = size;
  }

  encode(
    text: string,
    options: { addSpecialTokens?: boolean; parseSpecialTokens?: boolean } = {},
  ): number[] {
    const parseSpecial = options.parseSpecialTokens ?? true;
    const ids: number[] = [];
    if (options.addSpecialTokens === true) ids.push(...this.header.postProcessor.prefix);
    const words: string[] = [];
    const onToken = (token: AddedToken): void => {
      this.flushWords(words, ids);
      ids.push(token.id);
    };
    const onNormalizedText = (piece: string): void => this.preTokenize(piece, words);
    const onRawText = (piece: string): void => {
      const normalized = normalize(piece, this.header.normalizer);
      if (this.normalizedMatcher.empty) onNormalizedText(normalized);
      else this.normalizedMatcher.split(normalized, parseSpecial, onNormalizedText, onToken);
    };
    this.rawMatcher.split(wellFormed(text), parseSpecial, onRawText, onToken);
    this.flushWords(words, ids);
    if (options.addSpecialTokens === true) ids.push(...this.header.postProcessor.suffix);
    return ids;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    const skip = options.skipSpecialTokens ?? false;
    const kept: number[] = [];
    for (const id of ids) {
      const added = this.addedById.get(id);
      if (added !== undefined) {
        if (!(skip && added.special)) kept.push(id);
      } else if (
        id >= 0 &&
        id < this.header.model.size &&
        this.vocab.tokenOffsets[id] !== this.vocab.tokenOffsets[id + 1]
      ) {
        kept.push(id);
      }
    }
    return this.decoder.decode(kept);
  }

  tokenPieces(
    options: { skipSpecialTokens?: boolean } = {},
  ): ((id: number) => Uint8Array) | undefined {
    const pieces = this.decoder.pieces();
    if (pieces === undefined) return undefined;
    const skip = options.skipSpecialTokens ?? false;
    const empty = new Uint8Array(0);
    // The ids decode() drops (skipped specials, unknown ids) are empty pieces.
    return (id) => {
      const added = this.addedById.get(id);
      if (added !== undefined) return skip && added.special ? empty : pieces(id);
      return id >= 0 && id < this.header.model.size ? pieces(id) : empty;
    };
  }

  tokenToId(token: string): number | undefined {
    const added = this.addedByContent.get(token);
    if (added !== undefined) return added;
    const bytes = this.header.model.byteLevel
      ? byteLevelBytes(token)
      : new TextEncoder().encode(token);
    const id = bytes === undefined ? -1 : this.vocab.lookup(bytes, 0, bytes.length);
    return id === -1 ? undefined : id;
  }

  private flushWords(words: string[], ids: number[]): void {
    for (const word of words) this.bpe.encodeWord(word, ids);
    words.length = 0;
  }
}

const LONE_SURROGATE = /\p{Cs}/gu;

/** Lone surrogates become U+FFFD, as the Rust binding receives them (UTF-8 from JS strings). */
function wellFormed(text: string): string {
  LONE_SURROGATE.lastIndex = 0;
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATE, "\ufffd") : text;
}

const charToByte = memoMap<string, number>("tokenizer.byte-alphabet");

/** A byte-level token's bytes (its characters through the GPT-2 alphabet), if it is one. */
function byteLevelBytes(token: string): Uint8Array | undefined {
  if (charToByte.size === 0) {
    let extra = 0;
    for (let b = 0; b < 256; b++) {
      const printable =
        (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      charToByte.set(String.fromCodePoint(printable ? b : 256 + extra++), b);
    }
  }
  const chars = [...token];
  if (!chars.every((c) => charToByte.has(c))) return new TextEncoder().encode(token);
  return Uint8Array.from(chars, (c) => charToByte.get(c) ?? 0);
}
