// The decoder engine in-process, on the tiny LLM's FP32 graph rewritten as the origin runs
// it (split attention, last-position logits): an aborted request leaves the batch before
// the next decode step (no token is decoded for it after its abort), while the request
// beside it keeps decoding, one row per step; prompts that arrive together are prefilled in
// one run and continue exactly as each does alone. The rewrites are checked against the
// graph as exported.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecoderEngine } from "../../../../../origin/engines/decoder/engine";
import { KvCache } from "../../../../../origin/engines/decoder/kv-cache";
import type { GenerationParams } from "../../../../../origin/engines/decoder/generation-params";
import { readColumns, type Segment } from "../../../../../origin/engines/decoder/kv-segments";
import { PrefixCache, PromptBlocks } from "../../../../../origin/engines/decoder/prefix-cache";
import { createSession } from "../../../../../origin/engines/onnx-session";
import { Registry } from "../../../../../src/protocols/prometheus";
import { createVllmMetrics } from "../../../../../origin/metrics/vllm-metrics";
import { LOGITS_INDEX, lastPositionLogits } from "../../../../../origin/onnx/last-logits";
import { splitAttention } from "../../../../../origin/onnx/split-attention";
import { GREEDY } from "../../../../../src/generation/sampling-params";
import { ONE_THREAD, tinyLlmFp32 } from "../../../../support/tiny-llm-fp32";
import { metricValue } from "../../../../support/metric-value";

/**
 * A prefilled row whose `filled` columns are the first of row `row` of `data` ([rows, kvHeads,
 * length, headDim]).
 */
const prefilled = (data: Float32Array[], row: number, length: number, filled: number) => ({
  kind: "prefill" as const,
  segments: [{ data, row, length, from: 0, count: filled }],
  filled,
});

/** A request's token ids, read to its end. */
async function drain(request: { steps: AsyncIterable<{ tokenId: number }> }): Promise<number[]> {
  const ids: number[] = [];
  for await (const step of request.steps) ids.push(step.tokenId);
  return ids;
}

describe("decoder engine", () => {
  let engine: DecoderEngine;
  const registry = new Registry();
  const counter = (name: string) => metricValue(registry.render(), name);

  beforeAll(async () => {
    const { generation, bytes } = await tinyLlmFp32();
    const split = splitAttention(bytes, generation.layers);
    if (split === null)
      throw new Error("the tiny LLM's graph does not have the exported attention pattern");
    const last = lastPositionLogits(split);
    if (last === null) throw new Error("the tiny LLM's graph has no LM head input to gather");
    const session = await createSession(last, ONE_THREAD);
    const metrics = createVllmMetrics(registry, () => [], generation.contextLength);
    engine = new DecoderEngine(
      "tiny-llm",
      session,
      generation,
      { maxBatch: 8, maxWaiting: 8, prefillTokensPerStep: 2048, prefixCacheBytes: 64 << 20 },
      metrics,
      true,
    );
  });
  afterAll(() => undefined);

  const params = (prompt: number[]): GenerationParams => ({
    promptIds: prompt,
    maxTokens: 200,
    minTokens: 0,
    sampling: GREEDY,
    seed: 1,
    stopTokenIds: [],
    ignoreEos: true,
  });

  it(
    "stops decoding an aborted request within " + "one step; its neighbour decodes on alone",
    async () => {
      const abortA = new AbortController();
      const a = engine.submit(params([1, 5, 6, 7]), abortA.signal);
      const b = engine.submit(params([1, 8, 9]), new AbortController().signal);
      let received = 0;
      for await (const _ of a.steps) {
        if (++received === 3) break;
      }
      abortA.abort();
      const decodedAtAbort = a.generated.length;
      const [steps, rows] = [
        counter("origin_decode_steps_total"),
        counter("origin_decode_rows_total"),
      ];
      expect(engine.runningCount).toBe(1);
      const bAtAbort = b.generated.length;
      for await (const _ of b.steps) {
        if (b.generated.length >= bAtAbort + 5) break;
      }
      expect(a.generated.length).toBe(decodedAtAbort);
      const [stepsAfter, rowsAfter] = [
        counter("origin_decode_steps_total") - steps,
        counter("origin_decode_rows_total") - rows,
      ];
      expect(stepsAfter).toBeGreaterThanOrEqual(4);
      expect(rowsAfter).toBe(stepsAfter); // every step after the abort decoded b alone
    },
  );

  it(
    "prefills prompts that arrive together in one run, " +
      "right-padded, and continues each as it would alone",
    async () => {
      const prompts = [
        [1, 40, 41, 42, 43, 44, 45],
        [1, 50, 51, 52],
        [1, 60, 61, 62, 63, 64],
        [1, 70, 71, 72, 73],
      ];
      const short = (prompt: number[]): GenerationParams => ({ ...params(prompt), maxTokens: 12 });
      const alone: number[][] = [];
      for (const prompt of prompts)
        alone.push(await drain(engine.submit(short(prompt), new AbortController().signal)));
      const runs = counter("origin_prefill_runs_total");
      const together = await Promise.all(
        prompts.map((prompt) => drain(engine.submit(short(prompt), new AbortController().signal))),
      );
      expect(counter("origin_prefill_runs_total") - runs).toBe(1);
      expect(together).toEqual(alone);
    },
  );

  it(
    "continues each request as it would alone while rows leave " +
      "from the middle of the batch and newcomers take their places",
    async () => {
      // Rows finish in the order 1, 3, 0, 4, 2: each leaving row is filled by the last row that
      // stays.
      const first = [
        [1, 40, 41, 42],
        [1, 50, 51],
        [1, 60, 61, 62, 63],
        [1, 70, 71],
        [1, 80, 81, 82],
      ].map((prompt, i) => ({ ...params(prompt), maxTokens: [9, 3, 15, 5, 11][i]! }));
      const later = [
        [1, 90, 91, 92],
        [1, 95, 96],
      ].map((prompt, i) => ({ ...params(prompt), maxTokens: [10, 7][i]! }));
      const alone: number[][] = [];
      for (const request of [...first, ...later])
        alone.push(await drain(engine.submit(request, new AbortController().signal)));
      const submitted = first.map((request) =>
        engine.submit(request, new AbortController().signal),
      );
      const done = submitted.map(drain);
      await done[1]; // row 1 has left: the newcomers join while rows 0, 2, 3, 4 still decode
      const joined = later.map((request) =>
        drain(engine.submit(request, new AbortController().signal)),
      );
      expect([...(await Promise.all(done)), ...(await Promise.all(joined))]).toEqual(alone);
    },
  );
});

describe("automatic prefix caching (origin/engines/decoder/prefix-cache.ts)", () => {
  // Two engines as the origin runs them (split-attention steps, prefills on the graph as
  // exported), one keeping prompt blocks and one not: on the FP32 graph, reusing a cached
  // prefix must give the tokens computing it would.
  let cached: DecoderEngine;
  let uncached: DecoderEngine;
  const registry = new Registry();
  const counter = (name: string) => metricValue(registry.render(), name);

  beforeAll(async () => {
    const { generation, bytes } = await tinyLlmFp32();
    const settings = ONE_THREAD;
    const engineWith = async (
      prefixCacheBytes: number,
      metrics: ReturnType<typeof createVllmMetrics>,
    ) =>
      new DecoderEngine(
        "tiny-llm",
        await createSession(
          lastPositionLogits(splitAttention(bytes, generation.layers)!)!,
          settings,
        ),
        generation,
        { maxBatch: 16, maxWaiting: 16, prefillTokensPerStep: 2048, prefixCacheBytes },
        metrics,
        true,
        await createSession(lastPositionLogits(bytes)!, settings),
      );
    cached = await engineWith(
      64 << 20,
      createVllmMetrics(registry, () => [], generation.contextLength),
    );
    uncached = await engineWith(
      0,
      createVllmMetrics(new Registry(), () => [], generation.contextLength),
    );
    small = await engineWith(
      5 * BLOCK_BYTES,
      createVllmMetrics(smallRegistry, () => [], generation.contextLength),
    );
  });
  let small: DecoderEngine;
  const smallRegistry = new Registry();
  const BLOCK_BYTES = 16 * 6 * 1024;

  const params = (prompt: number[], maxTokens = 16): GenerationParams => ({
    promptIds: prompt,
    maxTokens,
    minTokens: 0,
    sampling: GREEDY,
    seed: 1,
    stopTokenIds: [],
    ignoreEos: true,
  });
  const run = (engine: DecoderEngine, prompt: number[]) =>
    drain(engine.submit(params(prompt), new AbortController().signal));
  /** Deterministic prose-like ids (the vocabulary's ordinary tokens start at 7). */
  const ids = (length: number, seed: number) => {
    let state = seed;
    return Array.from(
      { length },
      () => 7 + ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) % 400),
    );
  };

  it(
    "computes only what follows a prompt's cached " +
      "blocks, with the tokens computing them gives",
    async () => {
      // 41 tokens: two whole blocks may be reused, the last token's logits are computed
      const prompt = [1, ...ids(40, 3)];
      const expected = await run(uncached, prompt);
      const [queries, hits] = [
        counter("vllm:prefix_cache_queries_total"),
        counter("vllm:prefix_cache_hits_total"),
      ];
      expect(await run(cached, prompt)).toEqual(expected);
      expect([
        counter("vllm:prefix_cache_queries_total") - queries,
        counter("vllm:prefix_cache_hits_total") - hits,
      ]).toEqual([41, 0]);
      expect(cached.prefixCacheBytes).toBe(0); // its first block was new: only remembered
      expect(await run(cached, prompt)).toEqual(expected);
      // Seen before: its two whole blocks kept, and the third its 16 new tokens filled (all but
      // the last fed back: 41 + 15 columns), 6 KB each (4 layers × K/V × 3 heads × 64 FP32).
      expect(cached.prefixCacheBytes).toBe(3 * 16 * 6 * 1024);
      expect(counter("vllm:prefix_cache_hits_total") - hits).toBe(0);
      // The first step says how much of the prompt came from the cache (vLLM's num_cached_tokens);
      // later steps do not.
      const steps: { tokenId: number; cachedTokens?: number }[] = [];
      for await (const step of cached.submit(params(prompt), new AbortController().signal).steps)
        steps.push(step);
      expect(steps.map((step) => step.tokenId)).toEqual(expected);
      expect(steps.map((step) => step.cachedTokens)).toEqual([
        32,
        ...expected.slice(1).map(() => undefined),
      ]);
      expect(counter("vllm:prefix_cache_hits_total") - hits).toBe(32);
      // 32 tokens: only the first block is reused, so the last token is still computed.
      expect(await run(cached, prompt.slice(0, 32))).toEqual(
        await run(uncached, prompt.slice(0, 32)),
      );
      expect(counter("vllm:prefix_cache_hits_total") - hits).toBe(48);
    },
  );

  it(
    "keeps a finished request's output in whole blocks: a chat's next turn, resending the " +
      "answer, reads it from the cache, with the tokens computing it gives",
    async () => {
      const system = [1, ...ids(15, 51)];
      await run(cached, [...system, ...ids(9, 52)]); // the system prompt's block, seen once
      const first = [...system, ...ids(16, 53)];
      // 32 prompt tokens and 33 new ones: 64 columns held at its end, four whole blocks
      const answer = await drain(cached.submit(params(first, 33), new AbortController().signal));
      expect(answer).toEqual(
        await drain(uncached.submit(params(first, 33), new AbortController().signal)),
      );
      const second = [...first, ...answer, ...ids(7, 54)];
      const steps: { tokenId: number; cachedTokens?: number }[] = [];
      const hits = counter("vllm:prefix_cache_hits_total");
      for await (const step of cached.submit(params(second), new AbortController().signal).steps)
        steps.push(step);
      // Two blocks of prompt, two of the answer's first 32 tokens (prompts alone: 32).
      expect(steps[0]!.cachedTokens).toBe(64);
      expect(counter("vllm:prefix_cache_hits_total") - hits).toBe(64);
      expect(steps.map((step) => step.tokenId)).toEqual(await run(uncached, second));
      // A request whose prompt's blocks were not kept keeps no output either.
      const before = cached.prefixCacheBytes;
      await drain(cached.submit(params([1, ...ids(31, 55)], 40), new AbortController().signal));
      expect(cached.prefixCacheBytes).toBe(before);
    },
  );

  it(
    "prefills prompts with cached prefixes of different lengths " +
      "together, beside prompts with none, as each runs uncached",
    async () => {
      // a shared 48-token "system prompt": three blocks, kept from its second use
      const system = [1, ...ids(47, 11)];
      for (const seed of [12, 18]) await run(cached, [...system, ...ids(5, seed)]);
      const prompts = [
        [...system, ...ids(20, 13)], // 3 blocks cached
        [...system, ...ids(33, 14)], // 3 cached, and two more blocks of its own to keep
        [...system.slice(0, 20), ...ids(12, 15)], // 1 cached
        [1, ...ids(25, 16)], // none
        [...system, ...ids(28, 17)], // 3 cached
      ];
      const expected = [];
      for (const prompt of prompts) expected.push(await run(uncached, prompt));
      const [runs, hits] = [
        counter("origin_prefill_runs_total"),
        counter("vllm:prefix_cache_hits_total"),
      ];
      expect(await Promise.all(prompts.map((prompt) => run(cached, prompt)))).toEqual(expected);
      expect(counter("vllm:prefix_cache_hits_total") - hits).toBe(48 + 48 + 16 + 0 + 48);
      // the prompt without a cached prefix runs apart
      expect(counter("origin_prefill_runs_total") - runs).toBe(2);
      // The second prompt's own blocks were kept: it now reuses all five of its whole blocks.
      expect(await run(cached, prompts[1]!)).toEqual(expected[1]);
      expect(counter("vllm:prefix_cache_hits_total") - hits).toBe(160 + 80);
    },
  );

  it(
    "with room for five blocks, reusing and evicting as " +
      "prompts come, continues every prompt as uncached",
    async () => {
      const system = [1, ...ids(47, 21)];
      const prompts = [
        ...[22, 23, 24].map((seed) => [...system, ...ids(20, seed)]),
        [1, ...ids(70, 25)],
        [...system.slice(0, 33), ...ids(6, 26)],
        [1, ...ids(40, 27)],
      ];
      const expected = [];
      for (const prompt of prompts) expected.push(await run(uncached, prompt));
      const hits = () => metricValue(smallRegistry.render(), "vllm:prefix_cache_hits_total");
      for (let pass = 0; pass < 3; pass++) {
        // Together (hits and misses in one admission: the misses' blocks take the places of the
        // hits'), then one by one.
        expect(await Promise.all(prompts.map((prompt) => run(small, prompt)))).toEqual(expected);
        for (const [i, prompt] of prompts.entries())
          expect(await run(small, prompt), `pass ${pass}, prompt ${i}`).toEqual(expected[i]);
        expect(small.prefixCacheBytes).toBeLessThanOrEqual(5 * BLOCK_BYTES);
      }
      expect(hits()).toBeGreaterThan(0);
      // A prompt that reuses the system prompt's three blocks, admitted with one whose five new
      // blocks take every place in the cache: the reused blocks are read before they are
      // overwritten.
      await run(small, [...system, ...ids(6, 28)]);
      const opening = [1, ...ids(15, 31)];
      // the filler's first block, seen once: its blocks will be kept
      await run(small, [...opening, ...ids(3, 32)]);
      const [reusing, filling] = [
        [...system, ...system.slice(1, 41)],
        [...opening, ...ids(85, 30)],
        // 40 and 101 tokens to compute: admitted together; the first repeats the system prompt, so
        // its continuation depends on the reused keys/values
      ];
      const before = hits();
      expect(await Promise.all([run(small, reusing), run(small, filling)])).toEqual([
        await run(uncached, reusing),
        await run(uncached, filling),
      ]);
      expect(hits() - before).toBe(48);
    },
  );
});

describe("prefix cache blocks (origin/engines/decoder/prefix-cache.ts)", () => {
  const shape = { layers: 1, kvHeads: 1, headDim: 2 };
  const blockBytes = 2 * 16 * 2 * 4;
  /**
   * A prefilled row of `n` columns whose values name their column: [1 row, 1 head, n, 2] per
   * tensor.
   */
  const row = (n: number, tag: number): Segment[] => [
    {
      data: [0, 1].map((t) =>
        Float32Array.from({ length: n * 2 }, (_, i) => tag + 100 * t + Math.floor(i / 2)),
      ),
      row: 0,
      length: n,
      from: 0,
      count: n,
    },
  ];
  const blocks = (ids: number[]) => new PromptBlocks(ids);
  const prompt = (count: number, first: number) =>
    Array.from({ length: count * 16 + 1 }, (_, i) => first + i);

  it(
    "keeps a prompt's blocks once its first block was seen before, matches whole blocks from " +
      "the start, checks their ids, and keeps at most its budget, least recently used first",
    () => {
      const cache = new PrefixCache(shape, 3 * blockBytes);
      const a = prompt(2, 10);
      cache.insert(blocks(a), row(a.length, 1000));
      // a first block never seen before: remembered, nothing kept
      expect([cache.match(blocks(a)).length, cache.bytes]).toEqual([0, 0]);
      cache.insert(blocks(a), row(a.length, 1000));
      expect(cache.match(blocks(a)).length).toBe(2);
      // its second block differs
      expect(cache.match(blocks([...a.slice(0, 16), 99, ...a.slice(17)])).length).toBe(1);
      expect(cache.match(blocks([5, ...a.slice(1)])).length).toBe(0); // its first block differs
      // a prompt of one block computes its last token
      expect(cache.match(blocks(a.slice(0, 16))).length).toBe(0);
      const out = [new Float32Array(2 * 32 * 2), new Float32Array(2 * 32 * 2)];
      cache.gather(cache.match(blocks(a)), out, 1, 32); // into row 1 of [2, 1, 32, 2]
      expect([out[0]![64 + 2 * 17], out[1]![64 + 2 * 31 + 1]]).toEqual([1017, 1131]);
      const b = prompt(2, 300);
      cache.insert(blocks(b), row(b.length, 2000));
      cache.insert(blocks(b), row(b.length, 2000));
      expect(cache.bytes).toBe(3 * blockBytes);
      // a's last block went first: a's chain was touched from its last block to its first.
      expect([cache.match(blocks(a)).length, cache.match(blocks(b)).length]).toEqual([1, 2]);
      expect(new PrefixCache(shape, blockBytes - 1).bytes).toBe(0);
    },
  );

  it("keeps every prompt's blocks at first sight when it admits all (vLLM's way)", () => {
    const cache = new PrefixCache(shape, 8 * blockBytes, true);
    const a = prompt(2, 10);
    cache.insert(blocks(a), row(a.length, 1000));
    expect([cache.match(blocks(a)).length, cache.bytes]).toEqual([2, 2 * blockBytes]);
    // and a finished request's output right after, the prompt's blocks being kept
    const held = [...a, ...Array.from({ length: 31 }, (_, i) => 500 + i)];
    cache.extend(new PromptBlocks(held, blocks(a)), row(held.length, 1000));
    expect(cache.match(blocks([...held, 7])).length).toBe(4);
  });

  it(
    "adds a finished request's output blocks after its prompt's, only once the prompt's were " +
      "kept (the output is no sighting for the doorkeeper)",
    () => {
      const cache = new PrefixCache(shape, 8 * blockBytes);
      const a = prompt(2, 10);
      // its 33 prompt ids and 31 of output: 64 columns, four whole blocks
      const held = [...a, ...Array.from({ length: 31 }, (_, i) => 500 + i)];
      cache.extend(blocks(held), row(held.length, 1000));
      cache.insert(blocks(a), row(a.length, 1000));
      expect(cache.bytes).toBe(0); // the prompt's first sighting
      const asked = blocks(a);
      cache.insert(asked, row(a.length, 1000));
      expect(cache.bytes).toBe(2 * blockBytes);
      cache.extend(new PromptBlocks(held, asked), row(held.length, 1000));
      expect(cache.bytes).toBe(4 * blockBytes);
      const next = cache.match(blocks([...held, 7]));
      expect(next.length).toBe(4);
      const out = [new Float32Array(64 * 2), new Float32Array(64 * 2)];
      cache.gather(next, out, 0, 64);
      expect([out[0]![2 * 50], out[1]![2 * 63 + 1]]).toEqual([1050, 1163]);
    },
  );

  it(
    "reads a row's columns across its segments (a " +
      "cached prefix, then what its prefill computed)",
    () => {
      const prefix: Segment = {
        data: [Float32Array.from({ length: 2 * 3 * 2 }, (_, i) => 100 + i)],
        row: 1,
        length: 3,
        from: 0,
        count: 2,
      };
      const computed: Segment = {
        data: [Float32Array.from({ length: 4 * 2 }, (_, i) => 200 + i)],
        row: 0,
        length: 4,
        from: 1,
        count: 3,
      };
      const out = new Float32Array(10);
      readColumns([prefix, computed], shape, 0, 0, 0, 5, out, 0);
      expect([...out]).toEqual([106, 107, 108, 109, 202, 203, 204, 205, 206, 207]);
    },
  );
});

describe("split attention (origin/onnx/split-attention.ts)", () => {
  it(
    "computes the graph's logits and new " + "keys/values without concatenating the cache",
    async () => {
      const { generation, bytes } = await tinyLlmFp32();
      const { layers, kvHeads, headDim } = generation;
      const split = splitAttention(bytes, layers);
      expect(split).not.toBeNull();
      const settings = ONE_THREAD;
      const [exported, rewritten] = await Promise.all([
        createSession(bytes, settings),
        createSession(split!, settings),
      ]);
      const { ort } = await import("../../../../../origin/engines/onnx-session");
      // Two rows, 5 past columns (some masked: padding anywhere), 3 new tokens.
      const [rows, past, seq] = [2, 5, 3];
      let state = 7;
      const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
      const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
        input_ids: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: rows * seq }, (_, i) => BigInt(5 + i)),
          [rows, seq],
        ),
        attention_mask: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: rows * (past + seq) }, (_, i) => (i % 7 === 3 ? 0n : 1n)),
          [rows, past + seq],
        ),
        position_ids: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: rows * seq }, (_, i) => BigInt(past + (i % seq))),
          [rows, seq],
        ),
      };
      for (let l = 0; l < layers; l++) {
        for (const kv of ["key", "value"])
          feeds[`past_key_values.${l}.${kv}`] = new ort.Tensor(
            "float32",
            Float32Array.from({ length: rows * kvHeads * past * headDim }, random),
            [rows, kvHeads, past, headDim],
          );
      }
      const [a, b] = [await exported.run(feeds), await rewritten.run(feeds)];
      const logitsA = a.logits!.data as Float32Array;
      const logitsB = b.logits!.data as Float32Array;
      expect(logitsB.length).toBe(logitsA.length);
      let worst = 0;
      logitsA.forEach((value, i) => (worst = Math.max(worst, Math.abs(value - logitsB[i]!))));
      expect(worst).toBeLessThan(1e-4);
      expect(b["present.0.key"]!.dims).toEqual([rows, kvHeads, seq, headDim]);
      const fullV = a[`present.${layers - 1}.value`]!.data as Float32Array;
      const newV = b[`present.${layers - 1}.value`]!.data as Float32Array;
      for (let r = 0; r < rows; r++)
        for (let h = 0; h < kvHeads; h++)
          for (let s = 0; s < seq; s++)
            for (let d = 0; d < headDim; d++)
              expect(newV[((r * kvHeads + h) * seq + s) * headDim + d]).toBeCloseTo(
                fullV[((r * kvHeads + h) * (past + seq) + past + s) * headDim + d]!,
                5,
              );
    },
  );
});

describe("last-position logits (origin/onnx/last-logits.ts)", () => {
  it(
    "computes, for each row, the logits the graph as exported " +
      "computes at that row's position, and the same keys/values",
    async () => {
      const { generation, bytes } = await tinyLlmFp32();
      const { layers, kvHeads, headDim, vocabSize } = generation;
      const last = lastPositionLogits(bytes);
      expect(last).not.toBeNull();
      const settings = ONE_THREAD;
      const [exported, rewritten] = await Promise.all([
        createSession(bytes, settings),
        createSession(last!, settings),
      ]);
      const { ort } = await import("../../../../../origin/engines/onnx-session");
      // Three rows of a right-padded prefill after 2 past columns: each wants a different position.
      const [rows, past, seq] = [3, 2, 5];
      const wanted = [4, 1, 2];
      let state = 11;
      const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
      const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
        input_ids: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: rows * seq }, (_, i) => BigInt(9 + ((i * 37) % 400))),
          [rows, seq],
        ),
        attention_mask: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: rows * (past + seq) }, (_, i) =>
            i % (past + seq) < past + wanted[Math.floor(i / (past + seq))]! + 1 ? 1n : 0n,
          ),
          [rows, past + seq],
        ),
        position_ids: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: rows * seq }, (_, i) => BigInt(past + (i % seq))),
          [rows, seq],
        ),
      };
      for (let l = 0; l < layers; l++) {
        for (const kv of ["key", "value"])
          feeds[`past_key_values.${l}.${kv}`] = new ort.Tensor(
            "float32",
            Float32Array.from({ length: rows * kvHeads * past * headDim }, random),
            [rows, kvHeads, past, headDim],
          );
      }
      const a = await exported.run(feeds);
      const b = await rewritten.run({
        ...feeds,
        [LOGITS_INDEX]: new ort.Tensor("int64", BigInt64Array.from(wanted, BigInt), [rows, 1, 1]),
      });
      expect(b.logits!.dims).toEqual([rows, 1, vocabSize]);
      const full = a.logits!.data as Float32Array;
      const picked = b.logits!.data as Float32Array;
      let worst = 0;
      for (let r = 0; r < rows; r++) {
        for (let v = 0; v < vocabSize; v++)
          worst = Math.max(
            worst,
            Math.abs(picked[r * vocabSize + v]! - full[(r * seq + wanted[r]!) * vocabSize + v]!),
          );
      }
      expect(worst).toBeLessThan(1e-4);
      for (let l = 0; l < layers; l++) {
        for (const kv of ["key", "value"])
          expect(b[`present.${l}.${kv}`]!.data).toEqual(a[`present.${l}.${kv}`]!.data);
      }
    },
  );
});

describe("KV cache layout (origin/engines/decoder/kv-cache.ts)", () => {
  it(
    "keeps rows in place when rows only join, moves " +
      "them when a row leaves, and regrows with capacity",
    () => {
      const shape = { layers: 1, kvHeads: 2, headDim: 3 };
      const cache = new KvCache(shape);
      // A prefill's presents: [rows, kvHeads, length, headDim], value = 1000·tag + 100·head +
      // 10·column + d.
      const presents = (tags: number[], length: number) =>
        [0, 1].map(() =>
          Float32Array.from({ length: tags.length * 2 * length * 3 }, (_, i) => {
            const [row, head, column, d] = [
              Math.floor(i / (2 * length * 3)),
              Math.floor(i / (length * 3)) % 2,
              Math.floor(i / 3) % length,
              i % 3,
            ];
            return 1000 * tags[row]! + 100 * head + 10 * column + d;
          }),
        );
      const rowsOf = () => {
        const past = cache.pastFeeds()["past_key_values.0.key"]!;
        const [rows, heads, capacity] = past.dims as number[];
        const data = past.data as Float32Array;
        return Array.from(
          { length: rows! },
          (_, row) =>
            (column: number, head = 1, d = 2) =>
              data[((row * heads! + head) * capacity! + column) * 3 + d],
        );
      };
      const first = presents([1, 2, 4, 5], 4);
      cache.rebuild([4, 3, 4, 4].map((filled, row) => prefilled(first, row, 4, filled)));
      const buffer = cache.pastFeeds()["past_key_values.0.key"]!.data;
      cache.rebuild([
        ...[4, 3, 4, 4].map((filled, row) => ({ kind: "batch" as const, row, filled })),
        prefilled(presents([3], 2), 0, 2, 2),
      ]);
      let rows = rowsOf();
      expect([rows[0]!(3), rows[1]!(2), rows[3]!(0, 0, 1), rows[4]!(1)]).toEqual([
        1132, 2122, 5001, 3112,
      ]);
      expect((cache.pastFeeds()["past_key_values.0.key"]!.data as Float32Array).buffer).toBe(
        (buffer as Float32Array).buffer,
      ); // joined in place
      cache.rebuild([
        { kind: "batch", row: 1, filled: 3 },
        { kind: "batch", row: 4, filled: 2 },
      ]);
      rows = rowsOf();
      expect([rows.length, rows[0]!(2), rows[1]!(1, 0, 0)]).toEqual([2, 2122, 3010]);
      cache.rebuild([
        { kind: "batch", row: 0, filled: 3 },
        { kind: "batch", row: 1, filled: 33 },
      ]);
      expect(cache.capacity).toBe(64);
      rows = rowsOf();
      expect([rows[0]!(2), rows[1]!(1)]).toEqual([2122, 3112]);
    },
  );

  it("fills a leaving row with the last row in place, leaving the rows that stay untouched", () => {
    const cache = new KvCache({ layers: 1, kvHeads: 1, headDim: 2 });
    // Five rows of 3 tokens, value = 100·row + 10·column + d.
    const presents = [0, 1].map(() =>
      Float32Array.from(
        { length: 5 * 3 * 2 },
        (_, i) => 100 * Math.floor(i / 6) + 10 * (Math.floor(i / 2) % 3) + (i % 2),
      ),
    );
    cache.rebuild([0, 1, 2, 3, 4].map((row) => prefilled(presents, row, 3, 3)));
    const data = cache.pastFeeds()["past_key_values.0.value"]!.data as Float32Array;
    data[3 * 32 * 2] = -1; // a mark in row 3, column 0: a row that stays is not rewritten
    // Row 1 leaves; the last row (4) takes its place, as the engine lays rows out.
    cache.rebuild([
      { kind: "batch", row: 0, filled: 3 },
      { kind: "batch", row: 4, filled: 3 },
      { kind: "batch", row: 2, filled: 3 },
      { kind: "batch", row: 3, filled: 3 },
    ]);
    const past = cache.pastFeeds()["past_key_values.0.value"]!;
    expect(past.dims).toEqual([4, 1, 32, 2]);
    expect((past.data as Float32Array).buffer).toBe(data.buffer);
    const at = (row: number, column: number, d: number) =>
      (past.data as Float32Array)[(row * 32 + column) * 2 + d];
    expect([at(0, 2, 1), at(1, 0, 0), at(1, 2, 1), at(2, 1, 0), at(3, 0, 0), at(3, 2, 1)]).toEqual([
      21, 400, 421, 210, -1, 321,
    ]);
  });
});
