// Where a row's keys/values lie and how to read its columns back: the layout shared by the
// batch's KV cache and the prefix cache, which copy columns between each other.

export interface KvShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/**
 * Where a row's keys/values lie: `count` columns from column `from` of row `row`, in per-tensor
 * arrays laid out [rows, kvHeads, length, headDim]. A row may span several (a cached prefix,
 * then the columns its prefill computed).
 */
export interface Segment {
  readonly data: readonly Float32Array[];
  readonly row: number;
  readonly length: number;
  readonly from: number;
  readonly count: number;
}

/** Copies `count` columns of a row, from its column `column` on, for one tensor and head. */
export function readColumns(
  segments: readonly Segment[],
  shape: KvShape,
  tensor: number,
  head: number,
  column: number,
  count: number,
  out: Float32Array,
  at: number,
): void {
  const { kvHeads, headDim } = shape;
  let start = 0;
  for (const segment of segments) {
    const end = start + segment.count;
    if (count > 0 && column < end) {
      const from = column - start;
      const take = Math.min(count, segment.count - from);
      const base =
        ((segment.row * kvHeads + head) * segment.length + segment.from + from) * headDim;
      out.set(segment.data[tensor]!.subarray(base, base + take * headDim), at);
      [column, count, at] = [column + take, count - take, at + take * headDim];
    }
    start = end;
  }
  if (count > 0) throw new Error("readColumns: the row has fewer columns than asked for");
}
