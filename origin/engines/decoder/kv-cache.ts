// The batch's KV cache, preallocated and reused: per layer, keys and values live in two
// ping-pong buffers. A decode step reads the past from one (a view of exactly
// [rows, kvHeads, past, headDim]) and onnxruntime writes the present straight into the
// other (a bound output), so no step allocates or copies a cache in JavaScript; the
// buffers swap roles after each step. Rows are left-padded: a row's real columns are
// its last `filled` ones, the rest are zeros that attention_mask hides.
import { ort } from "../onnx-session";

/** Where a row of a rebuilt cache comes from: a row of the current batch, or a fresh prefill. */
export type RowSource = { kind: "batch"; row: number; filled: number } | { kind: "prefill"; presents: Float32Array[]; filled: number };

export interface KvShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

export class KvCache {
  /** Past columns of the batch (the longest row's filled length, plus any padding). */
  length = 0;
  rows = 0;
  /** [layer * 2 + (0 key | 1 value)] → buffer holding the current past. */
  private past: Float32Array[];
  /** The same, the buffers the next present is written into. */
  private next: Float32Array[];
  readonly names: { past: string[]; present: string[] };

  constructor(readonly shape: KvShape) {
    const tensors = shape.layers * 2;
    this.past = Array.from({ length: tensors }, () => new Float32Array(0));
    this.next = Array.from({ length: tensors }, () => new Float32Array(0));
    const names = (prefix: string) => Array.from({ length: tensors }, (_, i) => `${prefix}.${i >> 1}.${i & 1 ? "value" : "key"}`);
    this.names = { past: names("past_key_values"), present: names("present") };
  }

  private get rowStride() {
    return this.shape.kvHeads * this.shape.headDim;
  }

  /** Bytes held by the cache buffers (both sides). */
  get bytes(): number {
    return [...this.past, ...this.next].reduce((sum, buffer) => sum + buffer.byteLength, 0);
  }

  /** The next buffers, grown (geometrically, without copying) to hold `elements`. */
  private reserveNext(elements: number): void {
    for (let i = 0; i < this.next.length; i++) {
      if (this.next[i]!.length < elements) this.next[i] = new Float32Array(Math.max(elements, Math.ceil(this.next[i]!.length * 1.5)));
    }
  }

  private swap(): void {
    [this.past, this.next] = [this.next, this.past];
  }

  /** The past feeds of the next step: views of exactly [rows, kvHeads, length, headDim]. */
  pastFeeds(): Record<string, ort.Tensor> {
    const { kvHeads, headDim } = this.shape;
    const size = this.rows * this.rowStride * this.length;
    return Object.fromEntries(this.names.past.map((name, i) => [name, new ort.Tensor("float32", this.past[i]!.subarray(0, size), [this.rows, kvHeads, this.length, headDim])]));
  }

  /** Bound outputs for the next step's presents (one column longer), in the other buffers. */
  presentFetches(): Record<string, ort.Tensor> {
    const { kvHeads, headDim } = this.shape;
    const size = this.rows * this.rowStride * (this.length + 1);
    this.reserveNext(size);
    return Object.fromEntries(this.names.present.map((name, i) => [name, new ort.Tensor("float32", this.next[i]!.subarray(0, size), [this.rows, kvHeads, this.length + 1, headDim])]));
  }

  /** After a step ran with presentFetches(): the presents become the past. */
  advance(): void {
    this.swap();
    this.length += 1;
  }

  /**
   * Lays the batch out anew (rows joined or left): each row keeps its last `filled`
   * columns, right-aligned to the longest row, so columns every row had as padding go.
   */
  rebuild(sources: readonly RowSource[]): void {
    const { kvHeads, headDim } = this.shape;
    const length = sources.reduce((max, source) => Math.max(max, source.filled), 0);
    const size = sources.length * this.rowStride * length;
    this.reserveNext(size);
    for (let t = 0; t < this.next.length; t++) {
      const target = this.next[t]!;
      sources.forEach((source, row) => {
        const pad = length - source.filled;
        for (let head = 0; head < kvHeads; head++) {
          const at = ((row * kvHeads + head) * length) * headDim;
          target.fill(0, at, at + pad * headDim);
          const from =
            source.kind === "batch"
              ? this.past[t]!.subarray(((source.row * kvHeads + head) * this.length + (this.length - source.filled)) * headDim, ((source.row * kvHeads + head) * this.length + this.length) * headDim)
              : source.presents[t]!.subarray(head * source.filled * headDim, (head + 1) * source.filled * headDim);
          target.set(from, at + pad * headDim);
        }
      });
    }
    this.swap();
    this.rows = sources.length;
    this.length = length;
  }
}
