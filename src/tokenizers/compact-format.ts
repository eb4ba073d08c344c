// Reads the compact tokenizer file (scripts/tokenizers/compile.mjs writes it): a small JSON
// header, then typed-array sections viewed in place — the vocabulary is never parsed.
import { hashBytes, hashPair } from "./compact-hash";

export type NormalizerStep =
  | { type: "unicode"; form: "NFC" | "NFD" | "NFKC" | "NFKD" }
  | { type: "lowercase" }
  | { type: "prepend"; text: string }
  | { type: "replace"; from: string; to: string };

export type PreTokenizerStep =
  | {
      type: "split";
      pattern: string;
      behavior: "isolated" | "mergedWithPrevious" | "mergedWithNext" | "removed";
    }
  | { type: "prefixSpace" };

export type DecoderStep =
  | { type: "byteLevel" }
  | { type: "byteFallback" }
  | { type: "fuse" }
  | { type: "replace"; from: string; to: string }
  | { type: "strip"; content: string; start: number; stop: number };

/** [id, content, special (1/0), normalized (1/0)] */
export type AddedTokenEntry = [number, string, number, number];

export interface CompactHeader {
  format: 1;
  model: {
    byteLevel: boolean;
    size: number;
    ignoreMerges: boolean;
    byteFallback: boolean;
    unkId: number | null;
    fuseUnk: boolean;
    byteIds: number[];
    /** Where one BPE word may be cut into pieces encoded apart (scripts/tokenizers/compile.mjs
     * wordBreaks): before a run of the code point `before`, unless it follows one of `notAfter`. */
    wordBreaks?: { before: number; notAfter: number[] };
  };
  normalizer: NormalizerStep[];
  preTokenizer: PreTokenizerStep[];
  decoder: DecoderStep[];
  postProcessor: { prefix: number[]; suffix: number[] };
  added: AddedTokenEntry[];
  config: { bosTokenId: number | null; eosTokenId: number | null; padTokenId: number | null };
  sections: Record<
    "tokenBytes" | "tokenOffsets" | "vocabTable" | "merges" | "mergeTable",
    [number, number]
  >;
}

/** The vocabulary and merges, as views over the file's bytes. */
export class CompactVocab {
  constructor(
    readonly tokenBytes: Uint8Array,
    readonly tokenOffsets: Uint32Array,
    private readonly vocabTable: Int32Array,
    /** [a, b, merged] per rank */
    readonly merges: Uint32Array,
    private readonly mergeTable: Int32Array,
  ) {}

  /** The id of the token spelled by bytes[start, end), or -1. */
  lookup(bytes: Uint8Array, start: number, end: number): number {
    const table = this.vocabTable;
    const mask = table.length - 1;
    const length = end - start;
    for (let slot = hashBytes(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
      const id = table[slot] ?? -1;
      if (id === -1) return -1;
      const from = this.tokenOffsets[id] ?? 0;
      if ((this.tokenOffsets[id + 1] ?? 0) - from !== length) continue;
      let same = true;
      for (let i = 0; i < length; i++) {
        if (this.tokenBytes[from + i] !== bytes[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return id;
    }
  }

  /** The rank of the merge (a, b), or -1. */
  mergeRank(a: number, b: number): number {
    const table = this.mergeTable;
    const mask = table.length - 1;
    for (let slot = hashPair(a, b) & mask; ; slot = (slot + 1) & mask) {
      const rank = table[slot] ?? -1;
      if (rank === -1) return -1;
      if (this.merges[rank * 3] === a && this.merges[rank * 3 + 1] === b) return rank;
    }
  }
}

/** Parses the header and views the sections of a compact tokenizer file. */
export function readCompact(buffer: ArrayBuffer | Uint8Array): {
  header: CompactHeader;
  vocab: CompactVocab;
} {
  const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
  if (bytes.byteOffset % 8 !== 0)
    throw new TypeError("compact tokenizer bytes must be 8-byte aligned");
  const magic = String.fromCharCode(...bytes.subarray(0, 4));
  if (magic !== "TKZ1") throw new TypeError("not a compact tokenizer file (magic TKZ1)");
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(4, true);
  const parsed: unknown = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  if (!isHeader(parsed)) throw new TypeError("compact tokenizer header is not format 1");
  const view = <T>(
    name: keyof CompactHeader["sections"],
    make: (buffer: ArrayBufferLike, offset: number, length: number) => T,
    width: number,
  ): T => {
    const [offset, length] = parsed.sections[name];
    if (offset + length > bytes.byteLength)
      throw new TypeError(`compact tokenizer section ${name} is truncated`);
    return make(bytes.buffer, bytes.byteOffset + offset, length / width);
  };
  const vocab = new CompactVocab(
    view("tokenBytes", (b, o, n) => new Uint8Array(b, o, n), 1),
    view("tokenOffsets", (b, o, n) => new Uint32Array(b, o, n), 4),
    view("vocabTable", (b, o, n) => new Int32Array(b, o, n), 4),
    view("merges", (b, o, n) => new Uint32Array(b, o, n), 4),
    view("mergeTable", (b, o, n) => new Int32Array(b, o, n), 4),
  );
  return { header: parsed, vocab };
}

function isHeader(value: unknown): value is CompactHeader {
  return (
    typeof value === "object" &&
    value !== null &&
    "format" in value &&
    value.format === 1 &&
    "sections" in value
  );
}
