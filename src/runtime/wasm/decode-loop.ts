// The generation capability in this isolate: a decode loop over a decoder graph with a KV cache,
// run by the WASM runtime's tensor capability.
import { tokenLogprob, type TokenLogprob } from "../../generation/logprobs";
import { createPrng } from "../../generation/prng";
import { hasPenalties, TokenHistory } from "../../generation/logit-processors";
import { sample } from "../../generation/sampler";
import { ServiceError } from "../../errors/service-error";
import type { Tensor } from "../../tensors/tensor";
import type { GenerationCapability, TensorCapability } from "../runtime";

export interface DecoderShape {
  contextLength: number;
  layers: number;
  kvHeads: number;
  headDim: number;
}

const NO_IDS: ReadonlySet<number> = new Set();

const int64 = (values: readonly number[], shape: number[]): Tensor => ({
  datatype: "INT64",
  shape,
  data: BigInt64Array.from(values, BigInt),
});

/** One step of the loop: the new ids' logits row and the grown cache. */
async function step(
  decoder: TensorCapability,
  shape: DecoderShape,
  ids: readonly number[],
  past: Record<string, Tensor>,
  pastLength: number,
  signal: AbortSignal,
): Promise<{ logits: Float32Array; vocab: number; present: Record<string, Tensor> }> {
  const total = pastLength + ids.length;
  const feeds: Record<string, Tensor> = {
    input_ids: int64(ids, [1, ids.length]),
    attention_mask: int64(new Array<number>(total).fill(1), [1, total]),
    position_ids: int64(
      ids.map((_, i) => pastLength + i),
      [1, ids.length],
    ),
    ...past,
  };
  const { outputs } = await decoder.run(feeds, { signal });
  const logits = outputs.logits;
  if (logits === undefined || !(logits.data instanceof Float32Array))
    throw new ServiceError(500, "internal_error", "The decoder returned no FP32 logits");
  const vocab = logits.shape[2] ?? 0;
  const present: Record<string, Tensor> = {};
  for (let layer = 0; layer < shape.layers; layer += 1) {
    for (const kind of ["key", "value"] as const) {
      const tensor = outputs[`present.${layer}.${kind}`];
      if (tensor === undefined)
        throw new ServiceError(
          500,
          "internal_error",
          `The decoder returned no present.${layer}.${kind}`,
        );
      present[`past_key_values.${layer}.${kind}`] = tensor;
    }
  }
  // Every new id's row: the last one's is the next token's; a prefill's others score the prompt.
  return { logits: logits.data, vocab, present };
}

/**
 * The prompt's logprobs from a prefill's rows: id i given the ids before it, read off row
 * i − 1 (the same function as a generated token's); the first id has none.
 */
function promptLogprobs(
  logits: Float32Array,
  vocab: number,
  promptIds: readonly number[],
  count: number,
): Array<TokenLogprob | null> {
  return promptIds.map((id, i) =>
    i === 0 ? null : tokenLogprob(logits.subarray((i - 1) * vocab, i * vocab), id, count),
  );
}

function emptyCache(shape: DecoderShape): Record<string, Tensor> {
  const cache: Record<string, Tensor> = {};
  for (let layer = 0; layer < shape.layers; layer += 1) {
    for (const kind of ["key", "value"]) {
      cache[`past_key_values.${layer}.${kind}`] = {
        datatype: "FP32",
        shape: [1, shape.kvHeads, 0, shape.headDim],
        data: new Float32Array(0),
      };
    }
  }
  return cache;
}

function randomSeed(): number {
  const [high = 0, low = 0] = crypto.getRandomValues(new Uint32Array(2));
  return (high & 0x1fffff) * 2 ** 32 + low;
}

/**
 * Generation over a decoder graph run in this isolate (batch 1, one token per step).
 *
 * Inputs and outputs are named as Hugging Face Optimum's decoder-with-past exports name them.
 * Prefill once, then one token per run; the same sampler and PRNG as the origin
 * (src/generation/sampler.ts, prng.ts), so a seed gives the same text.
 */
export function decodeLoop(decoder: TensorCapability, shape: DecoderShape): GenerationCapability {
  return {
    contextLength: shape.contextLength,
    async *generate(request, signal) {
      const stopIds = new Set(request.stopTokenIds);
      const minTokens = request.minTokens ?? 0;
      const rng = createPrng(request.sampling.seed ?? randomSeed());
      const history = hasPenalties(request.sampling)
        ? new TokenHistory(request.promptIds)
        : undefined;
      const constraint = request.structured?.matcher();
      const maxTokens = Math.min(request.maxTokens, shape.contextLength - request.promptIds.length);
      let past = emptyCache(shape);
      let pastLength = 0;
      let next: readonly number[] = request.promptIds;
      let scored: { promptLogprobs?: Array<TokenLogprob | null> } = {};
      if (maxTokens <= 0 && request.promptLogprobs !== undefined) {
        // The prompt's logprobs alone: one prefill, nothing sampled.
        signal.throwIfAborted();
        const { logits, vocab } = await step(decoder, shape, next, past, pastLength, signal);
        yield {
          tokenIds: [],
          finishReason: "length",
          promptLogprobs: promptLogprobs(logits, vocab, request.promptIds, request.promptLogprobs),
        };
        return;
      }
      for (let generated = 0; generated < maxTokens; generated += 1) {
        // The signal is checked between steps: a client that leaves costs at most one more step.
        signal.throwIfAborted();
        const {
          logits: rows,
          vocab,
          present,
        } = await step(decoder, shape, next, past, pastLength, signal);
        if (generated === 0 && request.promptLogprobs !== undefined)
          scored = {
            promptLogprobs: promptLogprobs(rows, vocab, request.promptIds, request.promptLogprobs),
          };
        const logits = rows.subarray((next.length - 1) * vocab, next.length * vocab);
        pastLength += next.length;
        past = present;
        // A structured output's mask: the ids its grammar takes next (stop ids once it is
        // complete).
        const mask = constraint?.allowed(request.stopTokenIds);
        if (mask !== undefined && !mask.includes(1)) {
          // Nothing may follow (a closed value, and no stop id to end it with): the output ends
          // here.
          yield { tokenIds: [], finishReason: "stop", ...scored };
          return;
        }
        // min_tokens as vLLM's: no stop id can be sampled before that many ids.
        const id = sample(
          logits,
          request.sampling,
          rng,
          generated < minTokens ? stopIds : NO_IDS,
          history,
          mask,
        );
        history?.add(id);
        if (!stopIds.has(id)) constraint?.accept(id);
        // As vLLM's default (raw_logprobs): the model's own distribution, before the sampler's
        // adjustments.
        const logprobs =
          request.logprobs === undefined
            ? {}
            : { logprobs: [tokenLogprob(logits, id, request.logprobs)] };
        if (stopIds.has(id)) {
          yield { tokenIds: [], finishReason: "stop", stopTokenId: id, ...logprobs, ...scored };
          return;
        }
        const last = generated + 1 === maxTokens;
        yield last
          ? { tokenIds: [id], finishReason: "length", ...logprobs, ...scored }
          : { tokenIds: [id], ...logprobs, ...scored };
        scored = {};
        next = [id];
      }
      if (maxTokens <= 0) yield { tokenIds: [], finishReason: "length" };
    },
  };
}
