// A decode step's inputs and outputs: one [rows, 1] token per running request over the batch cache,
// masked per row, and the logits written into a buffer the engine keeps between steps.
import { LOGITS_INDEX } from "../../onnx/last-logits";
import { ort } from "../onnx-session";
import type { KvCache } from "./kv-cache";
import type { DecodeRequest } from "./request";

/** The step's buffers, grown to `maxBatch` rows the first time a step needs more. */
export class StepBuffers {
  private logits = new Float32Array(0);
  private mask = new BigInt64Array(0);

  constructor(private readonly maxBatch: number) {}

  /** The attention mask of `rows` rows over the cache's `width` columns, zeroed. */
  maskOf(rows: number, width: number): BigInt64Array {
    if (this.mask.length < rows * width) this.mask = new BigInt64Array(this.maxBatch * width);
    const mask = this.mask.subarray(0, rows * width);
    mask.fill(0n);
    return mask;
  }

  /** The logits of `rows` rows over the vocabulary. */
  logitsOf(rows: number, vocabSize: number): Float32Array {
    if (this.logits.length < rows * vocabSize)
      this.logits = new Float32Array(this.maxBatch * vocabSize);
    return this.logits.subarray(0, rows * vocabSize);
  }
}

/**
 * The step's feeds: each running request's pending token at its position, the mask of its filled
 * columns and the new one, the cache's past, and `logits_index` where the graph takes it.
 */
export function stepFeeds(
  running: readonly DecodeRequest[],
  cache: KvCache,
  mask: BigInt64Array,
  lastLogits: boolean,
): Record<string, ort.Tensor> {
  const rows = running.length;
  const capacity = cache.capacity;
  const width = capacity + 1;
  running.forEach((request, row) => {
    mask.fill(1n, row * width, row * width + request.filled);
    mask[row * width + capacity] = 1n;
  });
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor(
      "int64",
      BigInt64Array.from(running, (request) => BigInt(request.pending)),
      [rows, 1],
    ),
    position_ids: new ort.Tensor(
      "int64",
      BigInt64Array.from(running, (request) => BigInt(request.filled)),
      [rows, 1],
    ),
    attention_mask: new ort.Tensor("int64", mask, [rows, width]),
    ...cache.pastFeeds(),
  };
  if (lastLogits)
    feeds[LOGITS_INDEX] = new ort.Tensor("int64", new BigInt64Array(rows), [rows, 1, 1]);
  return feeds;
}

/** The step's fetches: the logits into `logits`, the presents' `columns` into the cache. */
export function stepFetches(
  logits: Float32Array,
  rows: number,
  vocabSize: number,
  cache: KvCache,
  columns: number,
): Record<string, ort.Tensor> {
  return {
    logits: new ort.Tensor("float32", logits, [rows, 1, vocabSize]),
    ...cache.presentFetches(columns),
  };
}
