// The reference origin's decoder engine over HTTP, as a real process on loopback:
// vLLM's /v1/completions shapes (pinned to vLLM's source through
// test/fixtures/vllm/completions.json), greedy parity with PyTorch on the FP32 graph,
// seeded sampling inside shared batches, vLLM's logprobs, continuous batching seen in
// /metrics, the bounded queue's 429, exact gauges after a mass abort, and a failing
// decoder's error event.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startOrigin } from "../../../../scripts/lib/origin.mjs";
import { metricValue } from "../../../support/metric-value";

type OriginProcess = Awaited<ReturnType<typeof startOrigin>>;
const KEY = "origin-test-key";
/** Starting the origin (tsx, three models, sha256 checks) can take long on a loaded machine. */
const STARTUP_MS = 150_000;

const Greedy = z.object({
  newTokens: z.number(),
  prompts: z.array(z.object({ promptIds: z.array(z.number()), greedyIds: z.array(z.number()) })),
});
const greedy = Greedy.parse(JSON.parse(readFileSync("test/fixtures/tiny-llm/greedy.json", "utf8")));
const vllm = z
  .record(z.string(), z.unknown())
  .parse(JSON.parse(readFileSync("test/fixtures/vllm/completions.json", "utf8")));

const Chunk = z.object({
  choices: z.array(
    z.object({
      token_ids: z.array(z.number()).nullable(),
      finish_reason: z.string().nullable(),
      stop_reason: z.union([z.number(), z.string()]).nullable(),
    }),
  ),
  usage: z
    .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
    .nullable(),
});
const Response = z.object({
  choices: z.array(
    z.object({
      token_ids: z.array(z.number()),
      finish_reason: z.string(),
      stop_reason: z.union([z.number(), z.string()]).nullable(),
    }),
  ),
});
/**
 * vLLM's CompletionLogProbs, as the origin writes it (no None entries: every token has its
 * logprobs).
 */
const LogProbs = z.strictObject({
  text_offset: z.array(z.number()),
  token_logprobs: z.array(z.number()),
  tokens: z.array(z.string()),
  top_logprobs: z.array(z.record(z.string(), z.number())),
});
type LogProbs = z.infer<typeof LogProbs>;
const LogprobsChoice = z.object({
  token_ids: z.array(z.number()),
  logprobs: LogProbs,
  finish_reason: z.string().nullable(),
  stop_reason: z.union([z.number(), z.string()]).nullable(),
});

/**
 * Two runs' top_logprobs: the same keys in the same order, values equal within float noise (a
 * prompt prefix served from the prefix cache is computed in another order, its last bits differ).
 */
function expectSameTops(
  actual: readonly Record<string, number>[],
  expected: readonly Record<string, number>[],
): void {
  expect(actual.map((top) => Object.keys(top))).toEqual(expected.map((top) => Object.keys(top)));
  actual.forEach((top, i) =>
    Object.entries(top).forEach(([key, value]) => expect(value).toBeCloseTo(expected[i]![key]!, 4)),
  );
}

/**
 * Checks one choice's logprobs against its token ids as vLLM writes them with
 * return_tokens_as_token_ids: one entry per token, each dict the sampled token first and at most
 * `count` more, a distribution's log-probabilities; for greedy, the sampled token the likeliest.
 */
function expectLogprobs(
  logprobs: LogProbs,
  tokenIds: readonly number[],
  count: number,
  greedy: boolean,
): void {
  const tokens = tokenIds.map((id) => `token_id:${id}`);
  expect(logprobs.tokens).toEqual(tokens);
  expect(logprobs.token_logprobs).toHaveLength(tokenIds.length);
  expect(logprobs.top_logprobs).toHaveLength(tokenIds.length);
  // vLLM's offsets: the text sent before the chunk ("" here), then each previous token string's
  // length.
  expect(logprobs.text_offset).toEqual(tokens.map((_, i) => tokens.slice(0, i).join("").length));
  logprobs.top_logprobs.forEach((top, i) => {
    const entries = Object.entries(top);
    expect(entries[0]).toEqual([tokens[i], logprobs.token_logprobs[i]]);
    expect(entries.length).toBeGreaterThanOrEqual(count);
    expect(entries.length).toBeLessThanOrEqual(count + 1);
    const values = entries.map(([, value]) => value);
    for (const value of values) expect(value).toBeLessThanOrEqual(0);
    expect(values.reduce((sum, value) => sum + Math.exp(value), 0)).toBeLessThanOrEqual(1 + 1e-9);
    if (greedy) expect(logprobs.token_logprobs[i]).toBe(Math.max(...values));
  });
}

/** The JSON type of every key, recursively: two values match when their key sets and kinds do. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value))
    return value.length > 0 && typeof value[0] === "object" ? [shapeOf(value[0])] : "array";
  if (value === null) return "null";
  if (typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .sort()
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  return typeof value;
}

/** Reads an SSE body into its `data:` payloads. */
async function readEvents(response: globalThis.Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith("data: ")).toBe(true);
      return event.slice("data: ".length);
    });
}

async function metric(url: string, name: string, labels = ""): Promise<number> {
  return metricValue(await (await fetch(`${url}/metrics`)).text(), name, labels);
}

describe("origin /v1/completions (vLLM protocol)", () => {
  let origin: OriginProcess;
  const complete = (
    body: Record<string, unknown>,
    key: string | null = KEY,
    signal?: AbortSignal,
  ) =>
    fetch(`${origin.url}/v1/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      },
      body: JSON.stringify({ model: "tiny-llm", ...body }),
      signal,
    });
  const ids = async (body: Record<string, unknown>) =>
    Response.parse(await (await complete({ return_token_ids: true, ...body })).json()).choices[0]!
      .token_ids;

  beforeAll(async () => {
    origin = await startOrigin({ ORIGIN_API_KEY: KEY, ORIGIN_GENERATION_GRAPH: "decoder-fp32" });
  }, STARTUP_MS);
  afterAll(() => origin?.stop());

  it(
    "streams vLLM's chunks: prompt ids first, one " +
      "token each, the finish, a usage chunk, [DONE]",
    async () => {
      const response = await complete({
        prompt: [1, 5, 6],
        max_tokens: 3,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
        return_token_ids: true,
        ignore_eos: true,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      const events = await readEvents(response);
      expect(events.at(-1)).toBe("[DONE]");
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
      expect(chunks).toHaveLength(4);
      expect(shapeOf(chunks[0])).toEqual(shapeOf(vllm.streamChunkFirst));
      expect(chunks[0].choices[0].prompt_token_ids).toEqual([1, 5, 6]);
      expect(shapeOf(chunks[2])).toEqual(shapeOf(vllm.streamChunkLast));
      expect(chunks[2].choices[0].finish_reason).toBe("length");
      expect(shapeOf(chunks[3])).toEqual(shapeOf(vllm.streamUsageChunk));
      expect(chunks[3].usage).toEqual({ prompt_tokens: 3, total_tokens: 6, completion_tokens: 3 });
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    },
  );

  it(
    "reports the prompt tokens its prefix cache served in " +
      "the stream's usage chunk (vLLM's prompt_tokens_details)",
    async () => {
      const prompt = Array.from({ length: 40 }, (_, i) => 100 + ((i * 37) % 300));
      const usages: unknown[] = [];
      for (let pass = 0; pass < 3; pass++) {
        const events = await readEvents(
          await complete({
            prompt,
            max_tokens: 2,
            temperature: 0,
            stream: true,
            stream_options: { include_usage: true },
            return_token_ids: true,
            ignore_eos: true,
          }),
        );
        usages.push(JSON.parse(events.at(-2)!).usage);
      }
      // Seen, then kept (its two whole blocks), then served from the cache: 32 of its 40 tokens.
      // Without cached tokens the key is absent, as vLLM dumps its usage chunk with exclude_none.
      expect(usages).toEqual([
        { prompt_tokens: 40, total_tokens: 42, completion_tokens: 2 },
        { prompt_tokens: 40, total_tokens: 42, completion_tokens: 2 },
        {
          prompt_tokens: 40,
          total_tokens: 42,
          completion_tokens: 2,
          prompt_tokens_details: { cached_tokens: 32 },
        },
      ]);
    },
  );

  it(
    "answers non-streamed requests in vLLM's " + "CompletionResponse, the same ids as the stream",
    async () => {
      const body = {
        prompt: [1, 5, 6],
        max_tokens: 3,
        temperature: 0,
        return_token_ids: true,
        ignore_eos: true,
      };
      const json: unknown = await (await complete(body)).json();
      expect(shapeOf(json)).toEqual(shapeOf(vllm.response));
      const events = await readEvents(await complete({ ...body, stream: true }));
      const streamed = events
        .slice(0, -1)
        .flatMap((event) =>
          Chunk.parse(JSON.parse(event)).choices.flatMap((choice) => choice.token_ids ?? []),
        );
      expect(Response.parse(json).choices[0]!.token_ids).toEqual(streamed);
    },
  );

  it(
    "returns vLLM's logprobs in each chunk and " + "in the whole response, tokens as token_id:N",
    async () => {
      const { promptIds, greedyIds } = greedy.prompts[0]!;
      const body = {
        prompt: promptIds,
        max_tokens: 8,
        temperature: 0,
        ignore_eos: true,
        return_token_ids: true,
        logprobs: 3,
        return_tokens_as_token_ids: true,
      };
      const events = await readEvents(await complete({ ...body, stream: true }));
      expect(events.at(-1)).toBe("[DONE]");
      const choices = events
        .slice(0, -1)
        .map((event) => LogprobsChoice.parse(JSON.parse(event).choices[0]));
      for (const choice of choices) expectLogprobs(choice.logprobs, choice.token_ids, 3, true);
      // Asking for logprobs changes no token.
      expect(choices.flatMap((choice) => choice.token_ids)).toEqual(greedyIds.slice(0, 8));
      // Not streamed: the same entries, over the whole output.
      const whole = LogprobsChoice.parse(
        ((await (await complete(body)).json()) as { choices: unknown[] }).choices[0],
      );
      expect(whole.token_ids).toEqual(greedyIds.slice(0, 8));
      expectLogprobs(whole.logprobs, whole.token_ids, 3, true);
      expectSameTops(
        whole.logprobs.top_logprobs,
        choices.flatMap((choice) => choice.logprobs.top_logprobs),
      );
      // logprobs 0: the sampled token's alone; without logprobs, null as before.
      const zero = LogprobsChoice.parse(
        ((await (await complete({ ...body, logprobs: 0 })).json()) as { choices: unknown[] })
          .choices[0],
      );
      expectLogprobs(zero.logprobs, zero.token_ids, 0, true);
      expectSameTops(
        zero.logprobs.top_logprobs,
        whole.logprobs.top_logprobs.map((top, i) => ({
          [whole.logprobs.tokens[i]!]: top[whole.logprobs.tokens[i]!]!,
        })),
      );
      const plain = await readEvents(
        await complete({
          prompt: promptIds,
          max_tokens: 3,
          temperature: 0,
          ignore_eos: true,
          stream: true,
        }),
      );
      for (const event of plain.slice(0, -1)) expect(event).toContain('"logprobs":null');
      expect(
        (
          (await (await complete({ prompt: promptIds, max_tokens: 3 })).json()) as {
            choices: { logprobs: unknown }[];
          }
        ).choices[0]!.logprobs,
      ).toBeNull();
    },
  );

  it(
    "gives the stop token that ends a request (a " + "stop_token_id or EOS) its logprobs entry too",
    async () => {
      const { promptIds, greedyIds } = greedy.prompts[0]!;
      const stopId = greedyIds[4]!;
      const upTo = greedyIds.indexOf(stopId) + 1;
      const base = {
        prompt: promptIds,
        temperature: 0,
        return_token_ids: true,
        logprobs: 2,
        return_tokens_as_token_ids: true,
      };
      const stopped = LogprobsChoice.parse(
        (
          (await (
            await complete({ ...base, max_tokens: 10, stop_token_ids: [stopId] })
          ).json()) as {
            choices: unknown[];
          }
        ).choices[0],
      );
      expect(stopped).toMatchObject({
        token_ids: greedyIds.slice(0, upTo),
        finish_reason: "stop",
        stop_reason: stopId,
      });
      expectLogprobs(stopped.logprobs, stopped.token_ids, 2, true);
      // EOS (id 2) forced by a logit bias after min_tokens: the logprobs are the model's own
      // (vLLM's raw_logprobs, before the bias), so the two tokens before it read as they do without
      // the bias.
      const forced = await readEvents(
        await complete({
          ...base,
          max_tokens: 10,
          min_tokens: 2,
          logit_bias: { "2": 100 },
          stream: true,
        }),
      );
      const choices = forced
        .slice(0, -1)
        .map((event) => LogprobsChoice.parse(JSON.parse(event).choices[0]));
      expect(choices.flatMap((choice) => choice.token_ids)).toHaveLength(3);
      expect(choices.at(-1)).toMatchObject({
        token_ids: [2],
        finish_reason: "stop",
        stop_reason: null,
      });
      for (const choice of choices) expectLogprobs(choice.logprobs, choice.token_ids, 2, false);
      const unbiased = LogprobsChoice.parse(
        (
          (await (await complete({ ...base, max_tokens: 2, min_tokens: 2 })).json()) as {
            choices: unknown[];
          }
        ).choices[0],
      );
      expect(choices.slice(0, 2).flatMap((choice) => choice.token_ids)).toEqual(unbiased.token_ids);
      expectSameTops(
        choices.slice(0, 2).flatMap((choice) => choice.logprobs.top_logprobs),
        unbiased.logprobs.top_logprobs,
      );
    },
  );

  it("samples the same tokens for a seed with and without logprobs", async () => {
    const seeded = {
      prompt: greedy.prompts[1]!.promptIds,
      max_tokens: 24,
      temperature: 1,
      seed: 4321,
      ignore_eos: true,
    };
    const plain = await ids(seeded);
    const withLogprobs = LogprobsChoice.parse(
      (
        (await (
          await complete({
            ...seeded,
            return_token_ids: true,
            logprobs: 5,
            return_tokens_as_token_ids: true,
          })
        ).json()) as { choices: unknown[] }
      ).choices[0],
    );
    expect(withLogprobs.token_ids).toEqual(plain);
    expectLogprobs(withLogprobs.logprobs, withLogprobs.token_ids, 5, false);
    expect(await ids({ ...seeded, seed: 1 })).not.toEqual(plain);
  });

  it(
    `continues ${greedy.prompts.length} prompts greedily ` +
      "exactly as PyTorch does on the FP32 graph, all in one batch",
    async () => {
      const results = await Promise.all(
        greedy.prompts.map(({ promptIds }) =>
          ids({
            prompt: promptIds,
            max_tokens: greedy.newTokens,
            temperature: 0,
            ignore_eos: true,
          }),
        ),
      );
      results.forEach((result, i) =>
        expect(result, `prompt ${i}`).toEqual(greedy.prompts[i]!.greedyIds),
      );
      // Twice more: the second time their first blocks have been seen, so their whole blocks are
      // kept; the third time the prompts of 17 tokens or more reuse their first 16 tokens'
      // keys/values from the prefix cache and compute only the rest.
      const hits = await metric(origin.url, "vllm:prefix_cache_hits_total");
      const Cached = Response.extend({
        usage: z.object({
          prompt_tokens_details: z.object({ cached_tokens: z.number() }).nullable(),
        }),
      });
      let details: (number | null)[] = [];
      for (const pass of ["seen", "cached"]) {
        const again = await Promise.all(
          greedy.prompts.map(async ({ promptIds }) =>
            Cached.parse(
              await (
                await complete({
                  prompt: promptIds,
                  max_tokens: greedy.newTokens,
                  temperature: 0,
                  ignore_eos: true,
                  return_token_ids: true,
                })
              ).json(),
            ),
          ),
        );
        again.forEach((result, i) =>
          expect(result.choices[0]!.token_ids, `prompt ${i}, ${pass}`).toEqual(
            greedy.prompts[i]!.greedyIds,
          ),
        );
        details = again.map((result) => result.usage.prompt_tokens_details?.cached_tokens ?? null);
      }
      const reusable = greedy.prompts.filter(({ promptIds }) => promptIds.length > 16).length;
      expect(reusable).toBeGreaterThanOrEqual(5);
      expect((await metric(origin.url, "vllm:prefix_cache_hits_total")) - hits).toBe(16 * reusable);
      // Each response says what its prompt took from the cache, as vLLM with
      // --enable-prompt-tokens-details: {cached_tokens} when some, null when none.
      expect(details).toEqual(
        greedy.prompts.map(({ promptIds }) => (promptIds.length > 16 ? 16 : null)),
      );
      expect(await metric(origin.url, "origin_prefix_cache_bytes")).toBeGreaterThan(0);
    },
  );

  it(
    "gives the same ids for the same seed, alone " + "and sharing the batch with other requests",
    async () => {
      const seeded = {
        prompt: greedy.prompts[0]!.promptIds,
        max_tokens: 24,
        temperature: 0.9,
        top_p: 0.95,
        top_k: 50,
        min_p: 0.01,
        ignore_eos: true,
      };
      const alone = await ids({ ...seeded, seed: 1234 });
      const crowd = await Promise.all([
        ids({ ...seeded, seed: 1234 }),
        ...[1, 2, 3, 4, 5].map((seed) =>
          ids({ ...seeded, prompt: greedy.prompts[seed % greedy.prompts.length]!.promptIds, seed }),
        ),
      ]);
      expect(crowd[0]).toEqual(alone);
      expect(await ids({ ...seeded, seed: 99 })).not.toEqual(alone);
    },
  );

  it(
    "batches continuously: concurrent streams share " + "decode steps and show as running together",
    async () => {
      const steps = await metric(origin.url, "origin_decode_steps_total");
      const rows = await metric(origin.url, "origin_decode_rows_total");
      let maxRunning = 0;
      const pending = Array.from({ length: 8 }, (_, i) =>
        new Promise((resolve) => setTimeout(resolve, i * 5)).then(() =>
          ids({ prompt: [1, 10 + i, 20 + i], max_tokens: 48, temperature: 0, ignore_eos: true }),
        ),
      );
      const watcher = (async () => {
        for (let i = 0; i < 20; i++) {
          maxRunning = Math.max(maxRunning, await metric(origin.url, "vllm:num_requests_running"));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      await Promise.all([...pending, watcher]);
      const stepsTaken = (await metric(origin.url, "origin_decode_steps_total")) - steps;
      const rowsDecoded = (await metric(origin.url, "origin_decode_rows_total")) - rows;
      expect(maxRunning).toBeGreaterThan(1);
      expect(rowsDecoded).toBe(8 * 47); // the first token of each comes from its prefill
      expect(stepsTaken).toBeLessThan(rowsDecoded / 2);
    },
  );

  it("refuses bad requests in vLLM's ErrorResponse shape, naming the field", async () => {
    const cases: [Record<string, unknown>, number, string | null][] = [
      [{ prompt: "a text prompt" }, 400, "prompt"],
      [{ prompt: [] }, 400, "prompt"],
      [{ prompt: [1, 99_999] }, 400, "prompt.1"],
      [{ prompt: [1, 2], max_tokens: 100_000 }, 400, "max_tokens"],
      [{ prompt: [1, 2], temperature: -1 }, 400, "temperature"],
      [{ prompt: [1, 2], n: 2 }, 400, "n"],
      // vLLM's ranges (vllm/sampling_params.py _verify_args): [-2, 2], [-2, 2], > 0.
      [{ prompt: [1, 2], presence_penalty: 2.5 }, 400, "presence_penalty"],
      [{ prompt: [1, 2], frequency_penalty: -3 }, 400, "frequency_penalty"],
      [{ prompt: [1, 2], repetition_penalty: 0 }, 400, "repetition_penalty"],
      // logit_bias as vLLM's SamplingParams.from_optional: integer keys, ids within the vocabulary.
      [{ prompt: [1, 2], logit_bias: { x: 1 } }, 400, "logit_bias"],
      [{ prompt: [1, 2], logit_bias: { "99999": 1 } }, 400, "logit_bias"],
      // allowed_token_ids as vLLM's SamplingParams._validate_allowed_token_ids: not empty, within
      // the vocabulary.
      [{ prompt: [1, 2], allowed_token_ids: [] }, 400, "allowed_token_ids"],
      [{ prompt: [1, 2], allowed_token_ids: [5, 99_999] }, 400, "allowed_token_ids"],
      [{ prompt: [1, 2], stop: ["x"] }, 400, "stop"],
      // vLLM's max_logprobs (20 by default) and check_logprobs (no negative count).
      [{ prompt: [1, 2], logprobs: 21 }, 400, "logprobs"],
      [{ prompt: [1, 2], logprobs: -1 }, 400, "logprobs"],
      [{ prompt: [1, 2], logprobs: 1.5 }, 400, "logprobs"],
      [{ prompt: [1, 2], stream_options: { include_usage: true } }, 400, "stream_options"],
      [{ prompt: [1, 2], model: "no-such-model" }, 404, "model"],
    ];
    for (const [body, status, param] of cases) {
      const response = await complete(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const json: unknown = await response.json();
      expect(shapeOf(json)).toEqual(shapeOf({ error: { message: "", type: "", param, code: 0 } }));
      expect(json).toMatchObject({ error: { param, code: status } });
    }
    const unauthorized = await complete({ prompt: [1, 2] }, null);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({
      error: { type: "AuthenticationError", code: 401 },
    });
    expect(
      (
        await complete({
          prompt: [1, 2],
          n: 1,
          presence_penalty: 0,
          user: "u",
          logprobs: null,
          return_tokens_as_token_ids: null,
        })
      ).status,
    ).toBe(200);
    expect((await complete({ prompt: [1, 2], logprobs: 20 })).status).toBe(200);
    expect(
      (
        await complete({
          prompt: [1, 2],
          presence_penalty: -2,
          frequency_penalty: 2,
          repetition_penalty: 1.2,
        })
      ).status,
    ).toBe(200);
    // A bias beyond ±100 is clamped, as vLLM clamps it: 1000 and 100 force the same token.
    const forced = async (bias: number) =>
      (
        (await (
          await complete({
            prompt: [1, 2],
            max_tokens: 3,
            temperature: 0,
            logit_bias: { "300": bias },
          })
        ).json()) as { choices: { token_ids?: number[] }[] }
      ).choices[0];
    expect(await forced(1000)).toEqual(await forced(100));
    // allowed_token_ids: only the listed ids come out, sampled or greedy.
    const allowed = [300, 301, 302];
    const sampled = (
      (await (
        await complete({
          prompt: [1, 2],
          max_tokens: 12,
          temperature: 1.5,
          seed: 4,
          ignore_eos: true,
          return_token_ids: true,
          allowed_token_ids: allowed,
        })
      ).json()) as { choices: { token_ids: number[] }[] }
    ).choices[0]!;
    expect(sampled.token_ids).toHaveLength(12);
    expect(sampled.token_ids.every((id) => allowed.includes(id))).toBe(true);
  });

  it("lists its model as vLLM does and says it is healthy", async () => {
    const models = await (
      await fetch(`${origin.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json();
    expect(models).toMatchObject({
      object: "list",
      data: [{ id: "tiny-llm", object: "model", max_model_len: expect.any(Number) }],
    });
    expect((await fetch(`${origin.url}/health`)).status).toBe(200);
  });

  it(
    "after a mass abort, reads 0 running and 0 " + "waiting at the next scrape, and stops decoding",
    async () => {
      const controllers = Array.from({ length: 24 }, () => new AbortController());
      const readers = await Promise.all(
        controllers.map(async (controller, i) => {
          const response = await complete(
            {
              prompt: [1, 30 + i],
              max_tokens: 400,
              temperature: 0,
              ignore_eos: true,
              stream: true,
            },
            KEY,
            controller.signal,
          );
          const reader = response.body!.getReader();
          await reader.read(); // the first token: the request is decoding
          return reader;
        }),
      );
      expect(await metric(origin.url, "vllm:num_requests_running")).toBeGreaterThan(0);
      const aborted = await metric(
        origin.url,
        "vllm:request_success_total",
        'finished_reason="abort"',
      );
      controllers.forEach((controller) => controller.abort());
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await metric(origin.url, "vllm:num_requests_running")).toBe(0);
      expect(await metric(origin.url, "vllm:num_requests_waiting")).toBe(0);
      // The gauges are the HTTP thread's own; the abort count comes back from the engine's thread.
      for (
        let i = 0;
        i < 100 &&
        (await metric(origin.url, "vllm:request_success_total", 'finished_reason="abort"')) <
          aborted + 24;
        i++
      )
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(
        await metric(origin.url, "vllm:request_success_total", 'finished_reason="abort"'),
      ).toBe(aborted + 24);
      const tokens = await metric(origin.url, "vllm:generation_tokens_total");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await metric(origin.url, "vllm:generation_tokens_total")).toBe(tokens);
    },
  );
});

describe("origin queue bound", () => {
  it(
    "answers 429 with Retry-After when every row and queue place is taken",
    async () => {
      const origin = await startOrigin({ ORIGIN_MAX_BATCH: "1", ORIGIN_MAX_WAITING: "1" });
      const controller = new AbortController();
      try {
        const long = {
          model: "tiny-llm",
          prompt: [1, 5],
          max_tokens: 400,
          temperature: 0,
          ignore_eos: true,
          stream: true,
        };
        const post = () =>
          fetch(`${origin.url}/v1/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(long),
            signal: controller.signal,
          });
        const running = await post();
        const waiting = await post();
        expect([running.status, waiting.status]).toEqual([200, 200]);
        const refused = await post();
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe("1");
        expect(await refused.json()).toMatchObject({
          error: { type: "RateLimitError", code: 429 },
        });
      } finally {
        controller.abort();
        await origin.stop();
      }
    },
    STARTUP_MS,
  );
});

describe("origin with the decoder graph as exported (ORIGIN_SPLIT_ATTENTION=false)", () => {
  it(
    "continues the prompts exactly as PyTorch does too, all in one batch",
    async () => {
      const origin = await startOrigin({
        ORIGIN_SPLIT_ATTENTION: "false",
        ORIGIN_GENERATION_GRAPH: "decoder-fp32",
      });
      try {
        const results = await Promise.all(
          greedy.prompts.map(async ({ promptIds }) => {
            const response = await fetch(`${origin.url}/v1/completions`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({
                model: "tiny-llm",
                prompt: promptIds,
                max_tokens: greedy.newTokens,
                temperature: 0,
                ignore_eos: true,
                return_token_ids: true,
              }),
            });
            return Response.parse(await response.json()).choices[0]!.token_ids;
          }),
        );
        results.forEach((result, i) =>
          expect(result, `prompt ${i}`).toEqual(greedy.prompts[i]!.greedyIds),
        );
      } finally {
        await origin.stop();
      }
    },
    STARTUP_MS,
  );
});

describe("origin with a stream interval (ORIGIN_STREAM_INTERVAL, vLLM's --stream-interval)", () => {
  it(
    "sends the first token alone, then 4 per chunk, the " +
      "rest with the finish: the same ids as without it",
    async () => {
      const origin = await startOrigin({
        ORIGIN_STREAM_INTERVAL: "4",
        ORIGIN_GENERATION_GRAPH: "decoder-fp32",
      });
      try {
        const post = async (body: Record<string, unknown>) =>
          fetch(`${origin.url}/v1/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              model: "tiny-llm",
              temperature: 0,
              return_token_ids: true,
              ...body,
            }),
          });
        const { promptIds, greedyIds } = greedy.prompts[0]!;
        const streamed = async (body: Record<string, unknown>) => {
          const events = await readEvents(
            await post({
              prompt: promptIds,
              stream: true,
              stream_options: { include_usage: true, continuous_usage_stats: true },
              ...body,
            }),
          );
          expect(events.at(-1)).toBe("[DONE]");
          return events.slice(0, -2).map(
            (event) =>
              JSON.parse(event) as z.infer<typeof Chunk> & {
                choices: { prompt_token_ids: number[] | null }[];
              },
          );
        };
        const chunks = await streamed({ max_tokens: 10, ignore_eos: true });
        expect(chunks.map((chunk) => chunk.choices[0]!.token_ids)).toEqual([
          greedyIds.slice(0, 1),
          greedyIds.slice(1, 5),
          greedyIds.slice(5, 9),
          greedyIds.slice(9, 10),
        ]);
        expect(chunks.map((chunk) => chunk.usage?.completion_tokens)).toEqual([1, 5, 9, 10]);
        expect(chunks.map((chunk) => chunk.choices[0]!.prompt_token_ids)).toEqual([
          promptIds,
          null,
          null,
          null,
        ]);
        expect(chunks.map((chunk) => chunk.choices[0]!.finish_reason)).toEqual([
          null,
          null,
          null,
          "length",
        ]);
        // A stop token inside an interval: the chunk goes out with it, vLLM's stop_reason naming
        // it.
        const stopId = greedyIds[6]!;
        const upTo = greedyIds.indexOf(stopId) + 1;
        const stopped = await streamed({ max_tokens: 10, stop_token_ids: [stopId] });
        expect(stopped.flatMap((chunk) => chunk.choices[0]!.token_ids ?? [])).toEqual(
          greedyIds.slice(0, upTo),
        );
        expect(stopped.at(-1)!.choices[0]).toMatchObject({
          finish_reason: "stop",
          stop_reason: stopId,
        });
        // With logprobs: one entry per token of each chunk, offsets counted within the chunk.
        const withLogprobs = await streamed({
          max_tokens: 10,
          ignore_eos: true,
          logprobs: 1,
          return_tokens_as_token_ids: true,
        });
        expect(withLogprobs.map((chunk) => chunk.choices[0]!.token_ids)).toEqual(
          chunks.map((chunk) => chunk.choices[0]!.token_ids),
        );
        for (const chunk of withLogprobs) {
          const choice = LogprobsChoice.parse(chunk.choices[0]);
          expectLogprobs(choice.logprobs, choice.token_ids, 1, true);
        }
        // Non-streamed requests are unchanged.
        expect(
          Response.parse(
            await (await post({ prompt: promptIds, max_tokens: 10, ignore_eos: true })).json(),
          ).choices[0]!.token_ids,
        ).toEqual(greedyIds.slice(0, 10));
      } finally {
        await origin.stop();
      }
    },
    STARTUP_MS,
  );
});

describe("origin whose decoder fails", () => {
  it(
    "ends a stream with vLLM's error event and [DONE], answers a " +
      "non-streamed request with a 500 ErrorResponse, and stays up",
    async () => {
      // A manifest that claims a fifth layer: the graph has no present.4.*, so every prefill fails.
      const dir = mkdtempSync(join(tmpdir(), "origin-broken-"));
      try {
        mkdirSync(join(dir, "tiny-llm"));
        const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8"));
        manifest.generation.layers += 1;
        writeFileSync(join(dir, "tiny-llm", "manifest.json"), JSON.stringify(manifest));
        for (const graph of Object.values<{ file: string }>(manifest.graphs))
          copyFileSync(join("models/tiny-llm", graph.file), join(dir, "tiny-llm", graph.file));
        const origin = await startOrigin({ ORIGIN_MODELS: dir });
        try {
          const post = (stream: boolean) =>
            fetch(`${origin.url}/v1/completions`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ prompt: [1, 5, 6], max_tokens: 4, stream }),
            });
          const streamed = await post(true);
          expect(streamed.status).toBe(200);
          const events = await readEvents(streamed);
          expect(events).toHaveLength(2);
          expect(JSON.parse(events[0]!)).toMatchObject({
            error: { type: "InternalServerError", code: 500 },
          });
          expect(events[1]).toBe("[DONE]");
          const plain = await post(false);
          expect(plain.status).toBe(500);
          expect(await plain.json()).toMatchObject({
            error: { type: "InternalServerError", code: 500 },
          });
          expect((await fetch(`${origin.url}/health`)).status).toBe(200);
        } finally {
          await origin.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    STARTUP_MS,
  );
});
