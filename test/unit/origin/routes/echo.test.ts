// vLLM's `echo` on the reference origin: the prompt's own logprobs, as lm-evaluation-harness's
// loglikelihood requests read them (`echo: true, logprobs: 1, max_tokens: 1, temperature: 0`).
// The wire format is vLLM's (vllm-project/vllm vllm/entrypoints/openai/serving_completion.py:
// completion_stream_generator and request_output_to_completion_response join the prompt's ids
// and logprobs before the output's, _create_completion_logprobs writes None entries as nulls;
// protocol.py CompletionRequest.to_sampling_params: with echo, prompt_logprobs = logprobs).
// The strongest check: a generated continuation, sent back as a prompt, is scored as its
// generation scored it — to float noise on the FP32 graph; on the INT8 graph, whose dynamic
// quantization scales activations over the whole run, within that noise, and to the last bit
// against the graph run outside the origin.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DecoderEngine } from "../../../../origin/engines/decoder/engine";
import type {
  GenerationParams,
  GenerationStep,
} from "../../../../origin/engines/decoder/generation-params";
import { createSession, ort } from "../../../../origin/engines/onnx-session";
import { parseManifest, type GenerationConfig } from "../../../../origin/manifests";
import { Registry } from "../../../../src/protocols/prometheus";
import { createVllmMetrics } from "../../../../origin/metrics/vllm-metrics";
import { readVerifiedFile } from "../../../../origin/model-files";
import { LOGITS_INDEX, lastPositionLogits } from "../../../../origin/onnx/last-logits";
import { splitAttention } from "../../../../origin/onnx/split-attention";
import { tokenLogprob } from "../../../../src/generation/logprobs";
import { GREEDY } from "../../../../src/generation/sampling-params";
import { startOrigin } from "../../../../scripts/lib/origin.mjs";
import { metricValue } from "../../../support/metric-value";
import { ONE_THREAD, tinyLlmFp32 } from "../../../support/tiny-llm-fp32";

const STARTUP_MS = 150_000;
const greedy = z
  .object({
    prompts: z.array(z.object({ promptIds: z.array(z.number()), greedyIds: z.array(z.number()) })),
  })
  .parse(JSON.parse(readFileSync("test/fixtures/tiny-llm/greedy.json", "utf8")));
const LogProbs = z.strictObject({
  text_offset: z.array(z.number()),
  token_logprobs: z.array(z.number().nullable()),
  tokens: z.array(z.string()),
  top_logprobs: z.array(z.record(z.string(), z.number()).nullable()),
});
type LogProbs = z.infer<typeof LogProbs>;
const Choice = z.object({
  text: z.string(),
  logprobs: LogProbs.nullable(),
  prompt_token_ids: z.array(z.number()).nullable(),
  token_ids: z.array(z.number()).nullable(),
});
type Choice = z.infer<typeof Choice>;
const Usage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  prompt_tokens_details: z.object({ cached_tokens: z.number() }).nullable(),
});

/** A loopback origin's /v1/completions, greedy, logprobs named by id. */
function client(url: () => string) {
  const post = (body: Record<string, unknown>) =>
    fetch(`${url()}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "tiny-llm",
        temperature: 0,
        return_tokens_as_token_ids: true,
        ...body,
      }),
    });
  return {
    post,
    /** The non-streamed choice and usage. */
    async whole(body: Record<string, unknown>): Promise<Choice & { usage: z.infer<typeof Usage> }> {
      const json = z
        .object({ choices: z.tuple([Choice]), usage: Usage })
        .parse(await (await post(body)).json());
      return { ...json.choices[0], usage: json.usage };
    },
    /** The streamed choices, one per chunk. */
    async chunks(body: Record<string, unknown>): Promise<Choice[]> {
      const events = (await (await post({ ...body, stream: true })).text())
        .split("\n\n")
        .filter(Boolean);
      expect(events.at(-1)).toBe("data: [DONE]");
      return events
        .slice(0, -1)
        .map((event) => Choice.parse(JSON.parse(event.slice("data: ".length)).choices[0]));
    },
  };
}

/**
 * Entries `from`.. of `actual` against `expected`'s: the same tokens, the same dict keys in order,
 * values within `tolerance`.
 */
function expectEntries(
  actual: LogProbs,
  from: number,
  expected: LogProbs,
  tolerance: number,
): void {
  const n = expected.tokens.length;
  expect(actual.tokens.slice(from, from + n)).toEqual(expected.tokens);
  expected.top_logprobs.forEach((top, i) => {
    const got = actual.top_logprobs[from + i];
    expect(Object.keys(got ?? {}), `entry ${from + i}`).toEqual(Object.keys(top ?? {}));
    for (const [key, value] of Object.entries(top ?? {}))
      expect(Math.abs(got![key]! - value), `entry ${from + i} ${key}`).toBeLessThan(tolerance);
  });
}

/**
 * vLLM's echoed logprobs for `promptIds` then `generated`: names, the None first entry, offsets,
 * the token first in each dict.
 */
function expectEchoShape(
  logprobs: LogProbs,
  promptIds: readonly number[],
  generated: readonly number[],
  count: number,
): void {
  const tokens = [...promptIds, ...generated].map((id) => `token_id:${id}`);
  expect(logprobs.tokens).toEqual(tokens);
  expect(logprobs.text_offset).toEqual(tokens.map((_, i) => tokens.slice(0, i).join("").length));
  expect([logprobs.token_logprobs[0], logprobs.top_logprobs[0]]).toEqual([null, null]);
  logprobs.top_logprobs.slice(1).forEach((top, i) => {
    const entries = Object.entries(top!);
    expect(entries[0]).toEqual([tokens[i + 1], logprobs.token_logprobs[i + 1]]);
    expect(entries.length).toBeGreaterThanOrEqual(count);
    expect(entries.length).toBeLessThanOrEqual(count + 1);
  });
}

describe("echo on the origin's FP32 graph", () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const { post, whole, chunks } = client(() => origin.url);
  beforeAll(async () => {
    origin = await startOrigin({ ORIGIN_GENERATION_GRAPH: "decoder-fp32" });
  }, STARTUP_MS);
  afterAll(() => origin?.stop());

  it(
    "scores a greedy continuation sent back as a prompt as its " +
      "generation scored it, and continues it as PyTorch does",
    async () => {
      for (const { promptIds, greedyIds } of greedy.prompts.slice(0, 4)) {
        const generated = await whole({
          prompt: promptIds,
          max_tokens: 12,
          logprobs: 5,
          ignore_eos: true,
          return_token_ids: true,
        });
        expect(generated.token_ids).toEqual(greedyIds.slice(0, 12));
        const echoed = await whole({
          prompt: [...promptIds, ...greedyIds.slice(0, 12)],
          echo: true,
          logprobs: 5,
          max_tokens: 1,
          return_token_ids: true,
        });
        expect(echoed.token_ids).toEqual(greedyIds.slice(12, 13));
        expectEntries(echoed.logprobs!, promptIds.length, generated.logprobs!, 1e-4);
      }
    },
  );

  it(
    "writes vLLM's echo: a null first entry, the prompt's entries then " +
      "the generated ones, token_ids the generated only; streamed as not",
    async () => {
      const { promptIds, greedyIds } = greedy.prompts[4]!;
      const body = { prompt: promptIds, echo: true, logprobs: 3, max_tokens: 5, ignore_eos: true };
      const choice = await whole({ ...body, return_token_ids: true });
      expect(choice).toMatchObject({
        text: "",
        prompt_token_ids: promptIds,
        token_ids: greedyIds.slice(0, 5),
      });
      expect(choice.usage).toMatchObject({ prompt_tokens: promptIds.length, completion_tokens: 5 });
      expectEchoShape(choice.logprobs!, promptIds, greedyIds.slice(0, 5), 3);
      // Streamed: the first chunk echoes the prompt (its ids even without return_token_ids), later
      // chunks their own token.
      const streamed = await chunks(body);
      expect(streamed.map((chunk) => chunk.prompt_token_ids)).toEqual([
        promptIds,
        null,
        null,
        null,
        null,
      ]);
      expect(streamed.map((chunk) => chunk.token_ids)).toEqual([null, null, null, null, null]);
      expect(streamed.map((chunk) => chunk.logprobs!.tokens.length)).toEqual([
        promptIds.length + 1,
        1,
        1,
        1,
        1,
      ]);
      expectEchoShape(streamed[0]!.logprobs!, promptIds, greedyIds.slice(0, 1), 3);
      expect(streamed.flatMap((chunk) => chunk.logprobs!.tokens)).toEqual(choice.logprobs!.tokens);
      expect(streamed.flatMap((chunk) => chunk.logprobs!.top_logprobs)).toEqual(
        choice.logprobs!.top_logprobs,
      );
      // Echo without logprobs: only the prompt's ids on the first chunk; not streamed, nothing
      // changes.
      const plain = await chunks({
        prompt: promptIds,
        echo: true,
        max_tokens: 2,
        return_token_ids: true,
      });
      expect(plain).toMatchObject([
        { logprobs: null, prompt_token_ids: promptIds, token_ids: greedyIds.slice(0, 1) },
        { logprobs: null, prompt_token_ids: null },
      ]);
      expect(await whole({ prompt: promptIds, echo: true, max_tokens: 2 })).toMatchObject({
        text: "",
        logprobs: null,
        prompt_token_ids: null,
        token_ids: null,
      });
    },
  );

  it(
    "never takes an echoed prompt from the " + "prefix cache: the same numbers cold and warm",
    async () => {
      const prompt = [
        1,
        ...greedy.prompts.flatMap(({ promptIds }) => promptIds.slice(1)).slice(0, 40),
      ];
      const echo = {
        prompt,
        echo: true,
        logprobs: 5,
        max_tokens: 3,
        ignore_eos: true,
        return_token_ids: true,
      };
      const cold = await whole(echo);
      let warm = 0;
      for (let pass = 0; pass < 3; pass++)
        warm =
          (await whole({ prompt, max_tokens: 3, ignore_eos: true })).usage.prompt_tokens_details
            ?.cached_tokens ?? 0;
      expect(warm).toBe(32); // the prompt's two whole blocks are cached now
      const again = await whole(echo);
      expect(again.usage.prompt_tokens_details).toBeNull();
      expect(again.logprobs).toEqual(cold.logprobs);
      expect(again.token_ids).toEqual(cold.token_ids);
    },
  );

  it(
    "prefills echoed prompts of different lengths " + "beside a plain request, each as it is alone",
    async () => {
      const [a, b, c] = [greedy.prompts[5]!, greedy.prompts[7]!, greedy.prompts[6]!];
      const echo = (promptIds: number[]) => ({
        prompt: promptIds,
        echo: true,
        logprobs: 2,
        max_tokens: 4,
        ignore_eos: true,
        return_token_ids: true,
      });
      const plain = {
        prompt: c.promptIds,
        max_tokens: 8,
        ignore_eos: true,
        return_token_ids: true,
      };
      const alone = [
        await whole(echo(a.promptIds)),
        await whole(echo(b.promptIds)),
        await whole(plain),
      ];
      const together = await Promise.all([
        whole(echo(a.promptIds)),
        whole(echo(b.promptIds)),
        whole(plain),
      ]);
      together.forEach((choice, i) => expect(choice.token_ids).toEqual(alone[i]!.token_ids));
      expect(together[2]).toMatchObject({
        token_ids: c.greedyIds.slice(0, 8),
        logprobs: null,
        prompt_token_ids: c.promptIds,
      });
      for (const i of [0, 1]) expectEntries(together[i]!.logprobs!, 0, alone[i]!.logprobs!, 1e-4);
    },
  );

  it("refuses what it does not serve, naming the field", async () => {
    for (const [body, param] of [
      [{ echo: "yes" }, "echo"],
      [{ echo: true, logprobs: 1, prompt_logprobs: 2 }, "prompt_logprobs"],
      [{ echo: true, logprobs: 1, max_tokens: 0 }, "max_tokens"],
    ] as const) {
      const response = await post({ prompt: [1, 5, 6], ...body });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { param } });
    }
  });
});

describe("echo on the origin's INT8 graph (its default)", () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const { whole } = client(() => origin.url);
  let session: ort.InferenceSession;
  let generation: GenerationConfig;
  beforeAll(async () => {
    // On the CPU, as the session below: the same kernels, the same numbers.
    origin = await startOrigin({ ORIGIN_EXECUTION_PROVIDERS: "cpu" });
    const manifest = parseManifest(
      JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8")),
      undefined,
    );
    if (manifest.kind !== "generation")
      throw new Error("tiny-llm is not a text-generation manifest");
    generation = manifest.generation;
    // Prefills run the graph as exported with last-position logits (origin/model-host.ts).
    session = await createSession(
      lastPositionLogits(
        await readVerifiedFile("models/tiny-llm", manifest.graph.file, manifest.graph.sha256),
      )!,
      ONE_THREAD,
    );
  }, STARTUP_MS);
  afterAll(() => origin?.stop());

  /**
   * The graph's logprobs for `ids` computed whole, every position's logits at once, as the origin's
   * echo prefill.
   */
  async function scored(ids: readonly number[], count: number): Promise<LogProbs> {
    const n = ids.length;
    const int64 = (values: Iterable<number>, dims: number[]) =>
      new ort.Tensor("int64", BigInt64Array.from(values, BigInt), dims);
    const feeds: Record<string, ort.Tensor> = {
      input_ids: int64(ids, [1, n]),
      attention_mask: int64(
        ids.map(() => 1),
        [1, n],
      ),
      position_ids: int64(ids.keys(), [1, n]),
      [LOGITS_INDEX]: int64(ids.keys(), [1, n, 1]),
    };
    const { kvHeads, headDim, vocabSize } = generation;
    for (const name of session.inputNames.filter((input) => input.startsWith("past_key_values.")))
      feeds[name] = new ort.Tensor("float32", new Float32Array(0), [1, kvHeads, 0, headDim]);
    const logits = (await session.run(feeds)).logits!.data as Float32Array;
    const entries = ids
      .slice(1)
      .map((id, i) => tokenLogprob(logits.subarray(i * vocabSize, (i + 1) * vocabSize), id, count));
    const name = (id: number) => `token_id:${id}`;
    return {
      text_offset: [],
      tokens: ids.slice(1).map(name),
      token_logprobs: entries.map((entry) => entry.logprob),
      top_logprobs: entries.map((entry, i) =>
        Object.fromEntries([
          [name(ids[i + 1]!), entry.logprob],
          ...entry.top.map(([id, value]) => [name(id), value]),
        ]),
      ),
    };
  }

  it(
    "gives the graph's own numbers for the whole prompt, and " +
      "a generation's within the graph's quantization noise",
    async () => {
      const differences: number[] = [];
      for (const { promptIds } of greedy.prompts.slice(0, 4)) {
        const generated = await whole({
          prompt: promptIds,
          max_tokens: 12,
          logprobs: 5,
          ignore_eos: true,
          return_token_ids: true,
        });
        const prompt = [...promptIds, ...generated.token_ids!];
        const echo = { prompt, echo: true, logprobs: 5, max_tokens: 1, return_token_ids: true };
        const echoed = await whole(echo);
        expectEchoShape(echoed.logprobs!, prompt, echoed.token_ids!, 5);
        expectEntries(echoed.logprobs!, 1, await scored(prompt, 5), 1e-6);
        expect((await whole(echo)).logprobs).toEqual(echoed.logprobs);
        // A generation computes its tokens one step at a time, the echo all at once: per-tensor
        // activation scales differ, so the logprobs do too (measured: mean 0.03, at most 0.26 over
        // 240 tokens).
        generated.logprobs!.token_logprobs.forEach((value, i) =>
          differences.push(
            Math.abs(value! - echoed.logprobs!.token_logprobs[promptIds.length + i]!),
          ),
        );
      }
      expect(differences.reduce((sum, d) => sum + d, 0) / differences.length).toBeLessThan(0.06);
      expect(Math.max(...differences)).toBeLessThan(0.5);
    },
  );
});

describe("prompt logprobs in the engine in-process (the HTTP-thread path)", () => {
  it(
    "computes them alike from every-position logits_index and " +
      "from a graph without one, in a run apart from plain prompts",
    async () => {
      const { generation, bytes } = await tinyLlmFp32();
      const registry = new Registry();
      const limits = {
        maxBatch: 8,
        maxWaiting: 8,
        prefillTokensPerStep: 2048,
        prefixCacheBytes: 64 << 20,
      };
      const metrics = createVllmMetrics(registry, () => [], generation.contextLength);
      const rewritten = new DecoderEngine(
        "tiny-llm",
        await createSession(
          lastPositionLogits(splitAttention(bytes, generation.layers)!)!,
          ONE_THREAD,
        ),
        generation,
        limits,
        metrics,
        true,
        await createSession(lastPositionLogits(bytes)!, ONE_THREAD),
      );
      const exported = new DecoderEngine(
        "tiny-llm",
        await createSession(bytes, ONE_THREAD),
        generation,
        limits,
        createVllmMetrics(new Registry(), () => [], generation.contextLength),
        false,
      );
      const params = (promptIds: number[], promptLogprobs?: number): GenerationParams => ({
        promptIds,
        maxTokens: 3,
        minTokens: 0,
        sampling: GREEDY,
        seed: 1,
        stopTokenIds: [],
        ignoreEos: true,
        logprobs: 4,
        ...(promptLogprobs === undefined ? {} : { promptLogprobs }),
      });
      const first = async (engine: DecoderEngine, request: GenerationParams) => {
        const steps: GenerationStep[] = [];
        for await (const step of engine.submit(request, new AbortController().signal).steps)
          steps.push(step);
        expect(steps.slice(1).every((step) => step.promptLogprobs === undefined)).toBe(true);
        return steps[0]!;
      };
      const [a, b, plain] = [
        greedy.prompts[8]!.promptIds,
        greedy.prompts[9]!.promptIds,
        greedy.prompts[10]!.promptIds,
      ];
      const [runs, queries] = [
        metricValue(registry.render(), "origin_prefill_runs_total"),
        metricValue(registry.render(), "vllm:prefix_cache_queries_total"),
      ];
      // Submitted together: one admission, two runs (the plain prompt, then both echoed prompts).
      const together = await Promise.all([
        first(rewritten, params(a, 4)),
        first(rewritten, params(b, 4)),
        first(rewritten, params(plain)),
      ]);
      expect(metricValue(registry.render(), "origin_prefill_runs_total") - runs).toBe(2);
      expect(metricValue(registry.render(), "vllm:prefix_cache_queries_total") - queries).toBe(
        plain.length,
      );
      expect(together[2]!.promptLogprobs).toBeUndefined();
      for (const [i, prompt] of [a, b].entries()) {
        const got = together[i]!.promptLogprobs!;
        const expected = (await first(exported, params(prompt, 4))).promptLogprobs!;
        expect(got).toHaveLength(prompt.length);
        expect(got[0]).toBeNull();
        got.slice(1).forEach((entry, j) => {
          expect(entry!.top.map(([id]) => id)).toEqual(expected[j + 1]!.top.map(([id]) => id));
          expect(Math.abs(entry!.logprob - expected[j + 1]!.logprob)).toBeLessThan(1e-4);
        });
      }
    },
  );
});
