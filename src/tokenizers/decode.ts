// Decoding as the Rust crate does it: every token through the decoder chain, on bytes with one
// UTF-8 decode for byte-level chains, on strings for the rest.
import type { CompactHeader, CompactVocab, DecoderStep } from "./compact-format";

// ignoreBOM: a leading U+FEFF is text (Rust keeps it), not a byte-order mark to drop.
const utf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();
const REPLACEMENT = [0xef, 0xbf, 0xbd];
/** A ByteFallback token, "<0xNN>" (Rust: six bytes, "<0x" … ">", hex). */
const FALLBACK_TOKEN = /^<0x[0-9A-Fa-f]{2}>$/;

/**
 * Added tokens decode as their content; special ones are dropped first with skipSpecialTokens.
 * Byte-level, Replace, ByteFallback and Fuse chains work on bytes with a single UTF-8 decode
 * (invalid UTF-8 → U+FFFD, as Rust's from_utf8_lossy); others on strings.
 */
export class ChunkDecoder {
  /** For each byte-fallback token id, its byte (else -1). */
  private readonly fallbackByte: Int16Array;
  private readonly byteMode: boolean;
  private readonly replaces: { from: Uint8Array; to: Uint8Array }[];
  private buffer = new Uint8Array(4096);
  /** The GPT-2 alphabet, for byte-level vocabularies decoded without a ByteLevel decoder. */
  private readonly byteChars: string[];

  /** Added tokens by id: their content, and the bytes the chain starts from. */
  private readonly added = new Map<number, { content: string; bytes: Uint8Array }>();

  constructor(
    private readonly vocab: CompactVocab,
    private readonly model: CompactHeader["model"],
    private readonly steps: readonly DecoderStep[],
    added: readonly { id: number; content: string }[],
  ) {
    const size = added.reduce((max, t) => Math.max(max, t.id + 1), model.size);
    this.fallbackByte = new Int16Array(size).fill(-1);
    this.byteChars = byteLevelChars();
    const hasByteLevel = steps.some((s) => s.type === "byteLevel");
    const charToByte = new Map(this.byteChars.map((c, b) => [c, b]));
    for (const { id, content } of added) {
      const chars = [...content];
      const bytes =
        hasByteLevel && chars.every((c) => charToByte.has(c))
          ? Uint8Array.from(chars, (c) => charToByte.get(c) ?? 0)
          : encoder.encode(content);
      this.added.set(id, { content, bytes });
    }
    if (steps.some((s) => s.type === "byteFallback")) {
      model.byteIds.forEach((id, byte) => {
        if (id >= 0 && !model.byteLevel && !this.added.has(id)) this.fallbackByte[id] = byte;
      });
      for (const [id, { content }] of this.added)
        if (FALLBACK_TOKEN.test(content)) this.fallbackByte[id] = parseInt(content.slice(3, 5), 16);
    }
    const byteSteps = new Set(["byteLevel", "replace", "byteFallback", "fuse"]);
    this.byteMode =
      steps.length > 0 &&
      steps.every((s) => byteSteps.has(s.type)) &&
      model.byteLevel === steps.some((s) => s.type === "byteLevel");
    this.replaces = steps.flatMap((s) =>
      s.type === "replace" ? [{ from: encoder.encode(s.from), to: encoder.encode(s.to) }] : [],
    );
  }

  /**
   * Each token's bytes, when decoding is exactly UTF-8 over their concatenation (a byte-level
   * chain, possibly with Replace/Fuse, and no ByteFallback, whose invalid runs Rust replaces
   * byte by byte): what a streaming detokenizer needs to decode incrementally. Else undefined.
   */
  pieces(): ((id: number) => Uint8Array) | undefined {
    if (!this.byteMode || this.steps.some((s) => s.type === "byteFallback")) return undefined;
    const { tokenBytes, tokenOffsets } = this.vocab;
    const empty = new Uint8Array(0);
    return (id) => {
      const token =
        this.added.get(id)?.bytes ??
        (id >= 0 && id < this.model.size
          ? tokenBytes.subarray(tokenOffsets[id] ?? 0, tokenOffsets[id + 1] ?? 0)
          : empty);
      return this.replaces.length === 0 ? token : this.replaced(token);
    };
  }

  /** Decodes known token ids (model or added). */
  decode(ids: readonly number[]): string {
    if (ids.length === 0) return "";
    return this.byteMode ? this.decodeBytes(ids) : this.decodeStrings(ids);
  }

  private decodeBytes(ids: readonly number[]): string {
    let n = 0;
    const { tokenBytes, tokenOffsets } = this.vocab;
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k] ?? 0;
      if ((this.fallbackByte[id] ?? -1) !== -1) {
        let end = k;
        while (end < ids.length && (this.fallbackByte[ids[end] ?? 0] ?? -1) !== -1) end++;
        const run = Uint8Array.from(ids.slice(k, end), (b) => this.fallbackByte[b] ?? 0);
        n = this.write(n, isUtf8(run) ? run : repeatReplacement(run.length));
        k = end - 1;
        continue;
      }
      const token =
        this.added.get(id)?.bytes ??
        tokenBytes.subarray(tokenOffsets[id] ?? 0, tokenOffsets[id + 1] ?? 0);
      n = this.write(n, this.replaces.length === 0 ? token : this.replaced(token));
    }
    return utf8.decode(this.buffer.subarray(0, n));
  }

  private replaced(token: Uint8Array): Uint8Array {
    let text = token;
    for (const { from, to } of this.replaces) text = replaceBytes(text, from, to);
    return text;
  }

  private write(n: number, bytes: Uint8Array): number {
    if (n + bytes.length > this.buffer.length) {
      const grown = new Uint8Array(Math.max(this.buffer.length * 2, n + bytes.length));
      grown.set(this.buffer.subarray(0, n));
      this.buffer = grown;
    }
    this.buffer.set(bytes, n);
    return n + bytes.length;
  }

  /** Any other chain, on token strings (Rust's decode_chain, then concatenated). */
  private decodeStrings(ids: readonly number[]): string {
    let tokens = ids.map((id) => this.tokenString(id));
    if (this.steps.length === 0) return tokens.join(" ");
    for (const step of this.steps) tokens = applyStep(step, tokens);
    return tokens.join("");
  }

  private tokenString(id: number): string {
    const added = this.added.get(id);
    if (added !== undefined) return added.content;
    const bytes = this.vocab.tokenBytes.subarray(
      this.vocab.tokenOffsets[id] ?? 0,
      this.vocab.tokenOffsets[id + 1] ?? 0,
    );
    if (!this.model.byteLevel) return utf8.decode(bytes);
    return Array.from(bytes, (b) => this.byteChars[b] ?? "").join("");
  }
}

function applyStep(step: DecoderStep, tokens: string[]): string[] {
  switch (step.type) {
    case "byteLevel":
      return [utf8.decode(Uint8Array.from(tokens.flatMap((t) => [...encoder.encode(t)])))];
    case "replace":
      return tokens.map((t) => t.replaceAll(step.from, step.to));
    case "fuse":
      return [tokens.join("")];
    case "strip":
      return tokens.map((t) => stripChars(t, step.content, step.start, step.stop));
    case "byteFallback": {
      const out: string[] = [];
      let run: number[] = [];
      const flush = (): void => {
        if (run.length === 0) return;
        const bytes = Uint8Array.from(run);
        out.push(isUtf8(bytes) ? utf8.decode(bytes) : "\ufffd".repeat(run.length));
        run = [];
      };
      for (const token of tokens) {
        const byte = FALLBACK_TOKEN.test(token) ? parseInt(token.slice(3, 5), 16) : -1;
        if (byte !== -1) run.push(byte);
        else {
          flush();
          out.push(token);
        }
      }
      flush();
      return out;
    }
    default:
      return step satisfies never;
  }
}

function stripChars(token: string, content: string, start: number, stop: number): string {
  const chars = [...token];
  let from = 0;
  while (from < start && chars[from] === content) from++;
  let to = chars.length;
  while (chars.length - to < stop && to > from && chars[to - 1] === content) to--;
  return chars.slice(from, to).join("");
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function repeatReplacement(count: number): Uint8Array {
  return Uint8Array.from({ length: count * 3 }, (_, i) => REPLACEMENT[i % 3] ?? 0);
}

function replaceBytes(bytes: Uint8Array, from: Uint8Array, to: Uint8Array): Uint8Array {
  const first = from[0];
  if (first === undefined || bytes.indexOf(first) === -1) return bytes;
  const out: number[] = [];
  for (let i = 0; i < bytes.length; ) {
    let hit = i + from.length <= bytes.length;
    for (let k = 0; hit && k < from.length; k++) hit = bytes[i + k] === from[k];
    if (hit) {
      out.push(...to);
      i += from.length;
    } else out.push(bytes[i++] ?? 0);
  }
  return Uint8Array.from(out);
}

/** GPT-2's byte → printable character map (Rust tokenizers: pre_tokenizers/byte_level.rs). */
function byteLevelChars(): string[] {
  const chars: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable =
      (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    chars[b] = String.fromCodePoint(printable ? b : 256 + extra++);
  }
  return chars;
}
