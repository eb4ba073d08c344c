// The BPE model over the compact vocabulary: a word's bytes → initial symbols → merges applied
// lowest rank first, leftmost on ties, as the Rust crate merges them.
import type { CompactHeader, CompactVocab } from "./compact-format";
import { MinHeap } from "./min-heap";

/** Words kept in the cache before it starts over (the Rust crate keeps 10,000). */
const CACHE_CAPACITY = 10_000;
/** Longer words are not cached. */
const CACHE_MAX_CHARS = 256;
/** Up to this many symbols, a linear scan finds the next merge faster than a heap. */
const SCAN_LIMIT = 64;
const NO_MERGE = 0x7fffffff;

/**
 * Initial symbols are bytes for byte-level models; characters, else <0xNN> byte fallback, else unk.
 * The merge order is that of the Rust crate's Word::merge_all. Words are cached (bounded) by their
 * text. SentencePiece-style words (a whole text: no pre-tokenizer split) are cut where no merge can
 * cross (the compact header's wordBreaks), so each piece is short, cached, and merged by the linear
 * scan.
 */
export class BpeModel {
  private readonly cache = new Map<string, readonly number[]>();
  private bytes = new Uint8Array(1024);
  private ids = new Int32Array(1024);
  private next = new Int32Array(1024);
  private prev = new Int32Array(1024);
  private ranks = new Int32Array(1024);
  private readonly breakBefore: string | undefined;
  /** Per BMP character (non-byte-level models): its token id, -1 none, -2 not looked up yet. */
  private charIds: Int32Array | undefined;
  private readonly noBreakAfter: ReadonlySet<number>;

  constructor(
    private readonly vocab: CompactVocab,
    private readonly model: CompactHeader["model"],
  ) {
    this.breakBefore =
      model.wordBreaks === undefined ? undefined : String.fromCodePoint(model.wordBreaks.before);
    this.noBreakAfter = new Set(model.wordBreaks?.notAfter ?? []);
  }

  /** Appends the ids of one pre-tokenized word to `out`. */
  encodeWord(word: string, out: number[]): void {
    const mark = this.breakBefore;
    if (mark === undefined || word.length <= 1) {
      this.encodePiece(word, out);
      return;
    }
    const markCode = mark.charCodeAt(0);
    let start = 0;
    for (let i = word.indexOf(mark, 1); i !== -1; i = word.indexOf(mark, i + 1)) {
      let before = word.charCodeAt(i - 1);
      if (before === markCode) continue;
      if (before >= 0xdc00 && before < 0xe000 && i >= 2) before = word.codePointAt(i - 2) ?? before;
      if (this.noBreakAfter.has(before)) continue;
      this.encodePiece(word.slice(start, i), out);
      start = i;
    }
    this.encodePiece(start === 0 ? word : word.slice(start), out);
  }

  private encodePiece(word: string, out: number[]): void {
    const cacheable = word.length <= CACHE_MAX_CHARS;
    if (cacheable) {
      const hit = this.cache.get(word);
      if (hit !== undefined) {
        for (const id of hit) out.push(id);
        return;
      }
    }
    const start = out.length;
    this.encodeUncached(word, out);
    if (cacheable) {
      if (this.cache.size >= CACHE_CAPACITY) this.cache.clear();
      this.cache.set(word, out.slice(start));
    }
  }

  private encodeUncached(word: string, out: number[]): void {
    const length = this.utf8(word);
    const bytes = this.bytes;
    if (this.model.ignoreMerges) {
      const whole = this.vocab.lookup(bytes, 0, length);
      if (whole !== -1) {
        out.push(whole);
        return;
      }
    }
    const count = this.model.byteLevel ? this.byteSymbols(length) : this.charSymbols(length);
    if (count === 0) return;
    if (count <= SCAN_LIMIT) this.mergeByScan(count);
    else this.mergeByHeap(count);
    for (let i = 0; i !== -1; i = this.next[i] ?? -1) out.push(this.ids[i] ?? 0);
  }

  /** Byte-level: one symbol per byte. */
  private byteSymbols(length: number): number {
    this.reserve(length);
    const byteIds = this.model.byteIds;
    for (let i = 0; i < length; i++) this.ids[i] = byteIds[this.bytes[i] ?? 0] ?? -1;
    return this.link(length);
  }

  /** One symbol per character; unknown characters fall back to bytes, else to unk. */
  private charSymbols(length: number): number {
    this.reserve(length);
    const { byteIds, byteFallback, unkId, fuseUnk } = this.model;
    const bytes = this.bytes;
    let count = 0;
    let pendingUnk = false;
    for (let i = 0; i < length; ) {
      const lead = bytes[i] ?? 0;
      const end = i + (lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4);
      const id = end - i < 4 ? this.charId(bytes, i, end) : this.vocab.lookup(bytes, i, end);
      if (id !== -1) {
        if (pendingUnk && unkId !== null) this.ids[count++] = unkId;
        pendingUnk = false;
        this.ids[count++] = id;
      } else if (byteFallback && this.allBytesKnown(i, end)) {
        for (let b = i; b < end; b++) this.ids[count++] = byteIds[bytes[b] ?? 0] ?? 0;
      } else if (unkId !== null) {
        if (pendingUnk && !fuseUnk) this.ids[count++] = unkId;
        pendingUnk = true;
      }
      i = end;
    }
    if (pendingUnk && unkId !== null) this.ids[count++] = unkId;
    return this.link(count);
  }

  /** A BMP character's id through a table filled on first sight (one hash lookup each). */
  private charId(bytes: Uint8Array, start: number, end: number): number {
    const lead = bytes[start] ?? 0;
    const code =
      end - start === 1
        ? lead
        : end - start === 2
          ? ((lead & 0x1f) << 6) | ((bytes[start + 1] ?? 0) & 0x3f)
          : ((lead & 0x0f) << 12) |
            (((bytes[start + 1] ?? 0) & 0x3f) << 6) |
            ((bytes[start + 2] ?? 0) & 0x3f);
    this.charIds ??= new Int32Array(0x10000).fill(-2);
    let id = this.charIds[code] ?? -2;
    if (id === -2) {
      id = this.vocab.lookup(bytes, start, end);
      this.charIds[code] = id;
    }
    return id;
  }

  private allBytesKnown(start: number, end: number): boolean {
    for (let b = start; b < end; b++)
      if ((this.model.byteIds[this.bytes[b] ?? 0] ?? -1) === -1) return false;
    return true;
  }

  private link(count: number): number {
    for (let i = 0; i < count; i++) {
      this.prev[i] = i - 1;
      this.next[i] = i + 1 < count ? i + 1 : -1;
    }
    return count;
  }

  /** Merges symbol i with its successor into `merged`. */
  private join(i: number, merged: number): void {
    const gone = this.next[i] ?? -1;
    const after = this.next[gone] ?? -1;
    this.ids[i] = merged;
    this.next[i] = after;
    if (after !== -1) this.prev[after] = i;
    this.ids[gone] = -1;
  }

  /** Pair ranks are looked up once and again only beside a merge; the next merge is a scan. */
  private mergeByScan(count: number): void {
    const { vocab, ids, next, prev, ranks } = this;
    for (let i = 0; i < count; i++)
      ranks[i] = i + 1 < count ? this.pairRank(ids[i] ?? 0, ids[i + 1] ?? 0) : NO_MERGE;
    for (;;) {
      let best = NO_MERGE;
      let at = -1;
      for (let i = 0; i !== -1; i = next[i] ?? -1) {
        const rank = ranks[i] ?? NO_MERGE;
        if (rank < best) {
          best = rank;
          at = i;
        }
      }
      if (at === -1) return;
      this.join(at, vocab.merges[best * 3 + 2] ?? 0);
      const after = next[at] ?? -1;
      ranks[at] = after === -1 ? NO_MERGE : this.pairRank(ids[at] ?? 0, ids[after] ?? 0);
      const before = prev[at] ?? -1;
      if (before !== -1) ranks[before] = this.pairRank(ids[before] ?? 0, ids[at] ?? 0);
    }
  }

  private pairRank(a: number, b: number): number {
    const rank = this.vocab.mergeRank(a, b);
    return rank === -1 ? NO_MERGE : rank;
  }

  /** Long words: a heap of (rank, position), re-checked when popped, as the Rust crate does. */
  private mergeByHeap(count: number): void {
    const { vocab } = this;
    const heap = new MinHeap(count);
    for (let i = 0; i + 1 < count; i++) {
      const rank = vocab.mergeRank(this.ids[i] ?? 0, this.ids[i + 1] ?? 0);
      if (rank !== -1) heap.push(rank, i);
    }
    while (heap.size > 0) {
      const [rank, i] = heap.pop();
      const j = this.next[i] ?? -1;
      if ((this.ids[i] ?? -1) === -1 || j === -1) continue;
      if (vocab.mergeRank(this.ids[i] ?? 0, this.ids[j] ?? 0) !== rank) continue;
      this.join(i, vocab.merges[rank * 3 + 2] ?? 0);
      const before = this.prev[i] ?? -1;
      if (before !== -1) {
        const left = vocab.mergeRank(this.ids[before] ?? 0, this.ids[i] ?? 0);
        if (left !== -1) heap.push(left, before);
      }
      const after = this.next[i] ?? -1;
      if (after !== -1) {
        const right = vocab.mergeRank(this.ids[i] ?? 0, this.ids[after] ?? 0);
        if (right !== -1) heap.push(right, i);
      }
    }
  }

  /** Writes the word's UTF-8 into the scratch buffer (the text is already well-formed). */
  private utf8(word: string): number {
    if (this.bytes.length < word.length * 3) this.bytes = new Uint8Array(word.length * 3);
    const bytes = this.bytes;
    let n = 0;
    for (let i = 0; i < word.length; i++) {
      let c = word.charCodeAt(i);
      if (c < 0x80) bytes[n++] = c;
      else if (c < 0x800) {
        bytes[n++] = 0xc0 | (c >> 6);
        bytes[n++] = 0x80 | (c & 63);
      } else if (c >= 0xd800 && c < 0xdc00) {
        c = 0x10000 + ((c - 0xd800) << 10) + (word.charCodeAt(++i) - 0xdc00);
        bytes[n++] = 0xf0 | (c >> 18);
        bytes[n++] = 0x80 | ((c >> 12) & 63);
        bytes[n++] = 0x80 | ((c >> 6) & 63);
        bytes[n++] = 0x80 | (c & 63);
      } else {
        bytes[n++] = 0xe0 | (c >> 12);
        bytes[n++] = 0x80 | ((c >> 6) & 63);
        bytes[n++] = 0x80 | (c & 63);
      }
    }
    return n;
  }

  private reserve(count: number): void {
    if (this.ids.length >= count) return;
    this.ids = new Int32Array(count);
    this.next = new Int32Array(count);
    this.prev = new Int32Array(count);
    this.ranks = new Int32Array(count);
  }
}
