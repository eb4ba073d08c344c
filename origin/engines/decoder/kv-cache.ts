// The batch's KV cache: one preallocated buffer per layer and key/value, laid out
// [rows, kvHeads, capacity, headDim]. Row r's tokens sit in columns 0..filled−1; the
// columns after them are masked (attention_mask 0) until filled. The whole buffer is the
// past fed to each step — a view, never a copy — and after the step each row's new
// key/value column is written in place from the step's (bound) present outputs. The
// layout changes only when rows join or leave or the capacity grows (by BLOCK columns).
import { ort } from "../onnx-session";
import { type KvShape, readColumns, type Segment } from "./kv-segments";

/** Columns added at a time: attention spans the capacity, so it grows in small steps. */
const BLOCK = 32;

/**
 * A row of a new layout: an existing row of the batch, or a prefilled row whose `filled`
 * columns lie in `segments` (a prefill's presents, after a cached prefix if it had one).
 */
export type RowSource =
  | { kind: "batch"; row: number; filled: number }
  | { kind: "prefill"; segments: readonly Segment[]; filled: number };

export class KvCache {
  rows = 0;
  /** Columns per row (the past length every step is fed). */
  capacity = 0;
  private buffers: Float32Array[];
  private spare: Float32Array[];
  private presents: Float32Array[];
  readonly names: { past: string[]; present: string[] };
  /** The step's past feeds and present fetches, kept while the layout holds. */
  private past: Record<string, ort.Tensor> | undefined;
  private fetches:
    | { rows: number; columns: number; tensors: Record<string, ort.Tensor> }
    | undefined;

  constructor(readonly shape: KvShape) {
    const tensors = shape.layers * 2;
    const empty = () => Array.from({ length: tensors }, () => new Float32Array(0));
    [this.buffers, this.spare, this.presents] = [empty(), empty(), empty()];
    const names = (prefix: string) =>
      Array.from({ length: tensors }, (_, i) => `${prefix}.${i >> 1}.${i & 1 ? "value" : "key"}`);
    this.names = { past: names("past_key_values"), present: names("present") };
  }

  /** Bytes held by the cache's buffers. */
  get bytes(): number {
    return [...this.buffers, ...this.spare, ...this.presents].reduce(
      (sum, buffer) => sum + buffer.byteLength,
      0,
    );
  }

  /** Where the first `count` columns of a row lie, until the next step or layout. */
  rowSegment(row: number, count: number): Segment {
    return { data: this.buffers, row, length: this.capacity, from: 0, count };
  }

  /** The capacity a batch whose longest row has `filled` tokens needs for its next step. */
  static capacityFor(filled: number): number {
    return Math.ceil((filled + 1) / BLOCK) * BLOCK;
  }

  private get rowSize() {
    return this.shape.kvHeads * this.capacity * this.shape.headDim;
  }

  /**
   * The past feeds of the next step: the buffers as [rows, kvHeads, capacity, headDim].
   * The same tensors (views) serve every step until the layout changes (rebuild).
   */
  pastFeeds(): Record<string, ort.Tensor> {
    if (this.past !== undefined) return this.past;
    const { kvHeads, headDim } = this.shape;
    const size = this.rows * this.rowSize;
    return (this.past = Object.fromEntries(
      this.names.past.map((name, i) => [
        name,
        new ort.Tensor("float32", this.buffers[i]!.subarray(0, size), [
          this.rows,
          kvHeads,
          this.capacity,
          headDim,
        ]),
      ]),
    ));
  }

  /**
   * Bound outputs for the step's presents: `columns` per row (1 for a split-attention graph,
   * capacity + 1 otherwise); the same tensors while rows and columns stay.
   */
  presentFetches(columns: number): Record<string, ort.Tensor> {
    if (
      this.fetches !== undefined &&
      this.fetches.rows === this.rows &&
      this.fetches.columns === columns
    )
      return this.fetches.tensors;
    const { kvHeads, headDim } = this.shape;
    const size = this.rows * kvHeads * columns * headDim;
    const tensors = Object.fromEntries(
      this.names.present.map((name, i) => {
        if (this.presents[i]!.length < size) this.presents[i] = new Float32Array(size * 2);
        return [
          name,
          new ort.Tensor("float32", this.presents[i]!.subarray(0, size), [
            this.rows,
            kvHeads,
            columns,
            headDim,
          ]),
        ];
      }),
    );
    this.fetches = { rows: this.rows, columns, tensors };
    return tensors;
  }

  /**
   * After a step: writes column `from` of each row's present into column filled[row] of the cache.
   */
  appendStep(filled: readonly number[], columns: number, from: number): void {
    const { kvHeads, headDim } = this.shape;
    for (let t = 0; t < this.buffers.length; t++) {
      const [cache, present] = [this.buffers[t]!, this.presents[t]!];
      for (let row = 0; row < this.rows; row++) {
        for (let head = 0; head < kvHeads; head++) {
          const source = ((row * kvHeads + head) * columns + from) * headDim;
          cache.set(
            present.subarray(source, source + headDim),
            ((row * kvHeads + head) * this.capacity + filled[row]!) * headDim,
          );
        }
      }
    }
  }

  /**
   * Lays the batch out anew (rows joined or left, or more columns needed). While the
   * capacity holds and no batch row moves to a later row (so rows are written in order, each
   * read before its place is overwritten), the buffers are updated in place: rows that keep
   * their place are not touched, and only moved and joining rows are written. Otherwise every
   * row is copied into the spare buffers. Columns past a row's tokens are left as they are:
   * they are masked, and only ever hold finite cache values or zeros.
   */
  rebuild(sources: readonly RowSource[]): void {
    const { kvHeads, headDim } = this.shape;
    const capacity = KvCache.capacityFor(
      sources.reduce((max, source) => Math.max(max, source.filled), 0),
    );
    const rowSize = kvHeads * capacity * headDim;
    const inPlace =
      capacity === this.capacity &&
      sources.every((source, row) => source.kind !== "batch" || source.row >= row);
    for (let t = 0; t < this.buffers.length; t++) {
      let target = inPlace ? this.buffers[t]! : this.spare[t]!;
      if (target.length < sources.length * rowSize) {
        const grown = new Float32Array(Math.ceil(sources.length * rowSize * 1.25));
        // every old row: moved rows are read from it below
        if (inPlace) grown.set(target.subarray(0, this.rows * rowSize));
        target = grown;
        if (inPlace) this.buffers[t] = grown;
        else this.spare[t] = grown;
      }
      for (let row = 0; row < sources.length; row++) {
        const source = sources[row]!;
        if (inPlace && source.kind === "batch" && source.row === row) continue; // already there
        for (let head = 0; head < kvHeads; head++) {
          const at = (row * kvHeads + head) * capacity * headDim;
          if (source.kind === "prefill")
            readColumns(source.segments, this.shape, t, head, 0, source.filled, target, at);
          else
            target.set(
              this.buffers[t]!.subarray(
                (source.row * kvHeads + head) * this.capacity * headDim,
                ((source.row * kvHeads + head) * this.capacity + source.filled) * headDim,
              ),
              at,
            );
        }
      }
    }
    if (!inPlace) [this.buffers, this.spare] = [this.spare, this.buffers];
    this.rows = sources.length;
    this.capacity = capacity;
    this.past = undefined;
  }
}
