// Prefills a group of admitted requests in one run: its feeds, its outputs read back, and each
// row's first token and keys/values.
import type { TokenLogprob } from "../../../src/generation/logprobs";
import { ort } from "../onnx-session";
import { LOGITS_INDEX } from "../../onnx/last-logits";
import { scored, type Admission } from "./admission";
import type { KvCache, RowSource } from "./kv-cache";
import { BLOCK, PromptBlocks, type PrefixCache } from "./prefix-cache";
import { everyPositionIndex, promptLogprobs } from "./prompt-logprobs";
import type { DecodeRequest } from "./request";

/** What of the batch cache a prefill reads: its tensors' names and shape. */
type CacheLayout = Pick<KvCache, "names" | "shape">;

/** A group's padded prefill inputs: `past` cached columns, then `length` new tokens, per row. */
export interface PrefillBatch {
  readonly group: readonly Admission[];
  readonly past: number;
  readonly length: number;
  readonly ids: BigInt64Array;
  readonly mask: BigInt64Array;
  readonly positions: BigInt64Array;
  /** The cached prefixes' keys/values, per tensor [rows, kvHeads, past, headDim]. */
  readonly pastData: Float32Array[];
  /** Whether the group asked for its prompts' logprobs: the logits of every position. */
  readonly everyPosition: boolean;
}

/** A prefill run's FP32 logits and presents, `presentLength` columns each per row. */
export interface PrefillOutputs {
  readonly logits: Float32Array;
  readonly presents: Float32Array[];
  readonly presentLength: number;
}

/** The tokens a request's prefill computes: its prompt after its cached prefix. */
const computed = ({ request, cached }: Admission) =>
  request.params.promptIds.length - cached.length * BLOCK;

/** The prompt tokens a group's prefill computes, pads not counted. */
export const computedTokens = (group: readonly Admission[]) =>
  group.reduce((sum, admission) => sum + computed(admission), 0);

/**
 * The prefill fault (ORIGIN_FAULT_PREFILL_US_PER_TOKEN): holds the engine as a larger model's
 * prefill of the group's computed tokens would.
 */
export async function prefillFault(usPerToken: number | undefined, group: readonly Admission[]) {
  const held = (usPerToken ?? 0) * computedTokens(group);
  if (held > 0) await new Promise((resolve) => setTimeout(resolve, held / 1000));
}

/**
 * A prefill of a group of admitted requests in ONE run: their prompts right-padded to the longest
 * (pads masked; causal attention keeps every real token blind to the pads after it, so a row's
 * keys/values and logits are those of its prompt alone) and, with a last-position-logits graph, the
 * LM head run for each row's last prompt token only. Requests whose prompts start with cached
 * blocks compute only the rest: their cached keys/values are the past, right-padded to the longest
 * (masked), and their new tokens take positions after their own prefix. A group of requests that
 * asked for their prompts' logprobs (vLLM's echo; never cached) gets the logits of every position
 * instead. Here: the run's feeds, its outputs read back, and each row's first token, prompt
 * logprobs and keys/values; the engine picks the session, runs it and counts it.
 *
 * Lays a group's prompts out right-padded after their cached prefixes (copied from the prefix
 * cache).
 */
export function prefillBatch(
  group: readonly Admission[],
  cache: CacheLayout,
  prefixCache: PrefixCache | undefined,
): PrefillBatch {
  const rows = group.length;
  const past = group.reduce((max, { cached }) => Math.max(max, cached.length * BLOCK), 0);
  const length = group.reduce(
    (max, { request, cached }) =>
      Math.max(max, request.params.promptIds.length - cached.length * BLOCK),
    0,
  );
  const { kvHeads, headDim } = cache.shape;
  const ids = new BigInt64Array(rows * length);
  const mask = new BigInt64Array(rows * (past + length));
  const positions = new BigInt64Array(rows * length);
  const pastData = cache.names.past.map(() => new Float32Array(rows * kvHeads * past * headDim));
  group.forEach(({ request, cached }, row) => {
    const prompt = request.params.promptIds;
    const prefix = cached.length * BLOCK;
    prefixCache?.gather(cached, pastData, row, past);
    mask.fill(1n, row * (past + length), row * (past + length) + prefix);
    for (let i = 0; i < length; i++) {
      positions[row * length + i] = BigInt(prefix + i);
      if (prefix + i < prompt.length)
        [ids[row * length + i], mask[row * (past + length) + past + i]] = [
          BigInt(prompt[prefix + i]!),
          1n,
        ];
    }
  });
  // The engine runs requests that asked for their prompt's logprobs in groups of their own
  // (admission.ts prefillRuns).
  return {
    group,
    past,
    length,
    ids,
    mask,
    positions,
    pastData,
    everyPosition: scored(group[0]!.request),
  };
}

/**
 * The run's feeds; a graph with `lastLogits` (`logits_index`) is asked for each row's last prompt
 * position, or every position.
 */
export function prefillFeeds(
  batch: PrefillBatch,
  cache: CacheLayout,
  lastLogits: boolean,
): Record<string, ort.Tensor> {
  const { group, past, length, everyPosition } = batch;
  const rows = group.length;
  const { kvHeads, headDim } = cache.shape;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", batch.ids, [rows, length]),
    attention_mask: new ort.Tensor("int64", batch.mask, [rows, past + length]),
    position_ids: new ort.Tensor("int64", batch.positions, [rows, length]),
  };
  if (lastLogits && everyPosition)
    feeds[LOGITS_INDEX] = new ort.Tensor("int64", everyPositionIndex(group.map(computed), length), [
      rows,
      length,
      1,
    ]);
  else if (lastLogits)
    feeds[LOGITS_INDEX] = new ort.Tensor(
      "int64",
      BigInt64Array.from(group, (admission) => BigInt(computed(admission) - 1)),
      [rows, 1, 1],
    );
  cache.names.past.forEach(
    (name, i) =>
      (feeds[name] = new ort.Tensor("float32", batch.pastData[i]!, [rows, kvHeads, past, headDim])),
  );
  return feeds;
}

/** The run's logits and presents, checked: FP32, one present per layer's key and value. */
export function prefillOutputs(
  batch: PrefillBatch,
  outputs: ort.InferenceSession.ReturnType,
  cache: CacheLayout,
): PrefillOutputs {
  const { layers, kvHeads, headDim } = cache.shape;
  const logits = outputs.logits?.data;
  if (!(logits instanceof Float32Array)) throw new Error("the decoder returned no FP32 logits");
  const presents = cache.names.present.map((name) => {
    const data = outputs[name]?.data;
    if (!(data instanceof Float32Array)) throw new Error(`the decoder returned no FP32 ${name}`);
    return data;
  });
  if (presents.length !== layers * 2)
    throw new Error("the decoder's presents do not match its layers");
  // The graph as exported returns past and new columns; the split rewrite only the new ones.
  const presentLength = presents[0]!.length / (batch.group.length * kvHeads * headDim);
  return { logits, presents, presentLength };
}

export interface PrefilledRowsOptions {
  /** Whether the run's graph took `logits_index` (one position per row unless every position). */
  lastLogits: boolean;
  vocabSize: number;
  prefixCache: PrefixCache | undefined;
  /**
   * Samples and sends a request's first token from its logits (with its prompt's logprobs, when
   * asked).
   */
  emit(request: DecodeRequest, logits: Float32Array, prompt?: Array<TokenLogprob | null>): void;
}

/**
 * Emits each request's first token (and its prompt's logprobs, when asked); keeps the prompts'
 * whole blocks in the prefix cache; returns where each row's keys/values lie.
 */
export function prefilledRows(
  batch: PrefillBatch,
  { logits, presents, presentLength }: PrefillOutputs,
  { lastLogits, vocabSize, prefixCache, emit }: PrefilledRowsOptions,
): RowSource[] {
  const { group, past, length, pastData, everyPosition } = batch;
  const positionsPerRow = lastLogits && !everyPosition ? 1 : length;
  return group.map((admission, row) => {
    const { request, cached } = admission;
    const n = computed(admission);
    const { promptIds, promptLogprobs: count } = request.params;
    request.filled = promptIds.length;
    const at = row * positionsPerRow + (positionsPerRow === 1 ? 0 : n - 1);
    // A request aborted during the run gets no token.
    if (request.state === "running") {
      const prompt =
        count === undefined
          ? undefined
          : promptLogprobs(logits, row * positionsPerRow * vocabSize, vocabSize, promptIds, count);
      emit(request, logits.subarray(at * vocabSize, (at + 1) * vocabSize), prompt);
    }
    const segments = [
      ...(cached.length === 0
        ? []
        : [{ data: pastData, row, length: past, from: 0, count: cached.length * BLOCK }]),
      { data: presents, row, length: presentLength, from: presentLength - length, count: n },
    ];
    if (prefixCache !== undefined)
      prefixCache.insert((request.blocks ??= new PromptBlocks(request.params.promptIds)), segments);
    return { kind: "prefill", segments, filled: request.filled };
  });
}
