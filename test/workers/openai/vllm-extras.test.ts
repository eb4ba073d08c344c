// vLLM's extras for RL, evaluation and load-generation clients through the edge:
// return_token_ids, stream_options.continuous_usage_stats and truncate_prompt_tokens.
// return_token_ids is tested both places (the reference origin over vLLM's
// wire format, and the isolate's WASM loop on the same FP32 graph), in vLLM's shapes
// (vllm-project/vllm vllm/entrypoints/openai/protocol.py: ChatCompletionResponse.prompt_token_ids,
// ChatCompletionResponseChoice.token_ids, ChatCompletionStreamResponse.prompt_token_ids,
// ChatCompletionResponseStreamChoice.token_ids, CompletionResponseChoice.prompt_token_ids /
// token_ids; serving_chat.py chat_completion_stream_generator: each choice's role chunk carries
// the prompt's ids, each later chunk its own tokens' ids; serving_completion.py: the prompt's ids
// on a choice's first chunk). RL frameworks read these to train on exactly the sampled tokens.
import { describe, expect, inject, it } from "vitest";
import { problem } from "../../support/workers/helpers";
import {
  appInIsolate,
  appOnOrigin,
  call,
  sseEvents,
  type App,
} from "../../support/workers/generation";

const origin = inject("llmOrigin");

interface ChatResponse {
  choices: {
    message: { content: string };
    finish_reason: string;
    stop_reason: string | number | null;
    token_ids?: number[];
  }[];
  usage: { prompt_tokens: number; completion_tokens: number };
  prompt_token_ids?: number[];
}
interface CompletionResponse {
  choices: {
    text: string;
    finish_reason: string;
    stop_reason: string | number | null;
    prompt_token_ids?: number[];
    token_ids?: number[];
  }[];
  usage: { prompt_tokens: number; completion_tokens: number };
}
interface ChatChunk {
  prompt_token_ids?: number[];
  choices: {
    index: number;
    delta: { content?: string };
    finish_reason: string | null;
    token_ids?: number[];
  }[];
}
interface CompletionChunk {
  choices: {
    index: number;
    text: string;
    finish_reason: string | null;
    prompt_token_ids?: number[];
    token_ids?: number[];
  }[];
}

const messages = [{ role: "user", content: "Tell me about the old house by the river." }];
const chat = (extra: Record<string, unknown> = {}) => ({
  model: "tiny-llm",
  messages,
  max_tokens: 20,
  temperature: 0,
  return_token_ids: true,
  ...extra,
});
const completion = (extra: Record<string, unknown> = {}) => ({
  model: "tiny-llm",
  prompt: "The old man walked slowly down the road",
  max_tokens: 20,
  temperature: 0,
  return_token_ids: true,
  ...extra,
});

async function tokenize(app: App, body: Record<string, unknown>): Promise<number[]> {
  return (
    await (
      await call(app, "/tokenize", { model: "tiny-llm", ...body })
    ).json<{ tokens: number[] }>()
  ).tokens;
}
async function detokenize(app: App, tokens: readonly number[]): Promise<string> {
  return (
    await (await call(app, "/detokenize", { model: "tiny-llm", tokens })).json<{ prompt: string }>()
  ).prompt;
}
const chunksOf = async <T>(response: Response): Promise<T[]> => {
  const events = await sseEvents(response);
  expect(events.at(-1)).toBe("[DONE]");
  return events.slice(0, -1).map((event) => JSON.parse(event) as T);
};

describe.skipIf(origin === null)("return_token_ids, on the origin and in the isolate", () => {
  const places: [string, () => Promise<App>][] = [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];

  for (const [place, appOf] of places) {
    describe(place, () => {
      it("chat: the templated prompt's ids once, the " +
        "generated ids per choice; their text is the answer", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const body = await (await call(app, "/v1/chat/completions", chat())).json<ChatResponse>();
        expect(body.prompt_token_ids).toEqual(await tokenize(app, { messages }));
        expect(body.prompt_token_ids).toHaveLength(body.usage.prompt_tokens);
        const [choice] = body.choices;
        expect(choice?.token_ids).toHaveLength(body.usage.completion_tokens);
        expect(choice?.finish_reason).toBe("length");
        expect(await detokenize(app, choice?.token_ids ?? [])).toBe(choice?.message.content);
        // Not asked: neither key, and the same text.
        const plain = await (
          await call(app, "/v1/chat/completions", chat({ return_token_ids: false }))
        ).json<ChatResponse>();
        expect(plain).not.toHaveProperty("prompt_token_ids");
        expect(plain.choices[0]).not.toHaveProperty("token_ids");
        expect(plain.choices[0]?.message.content).toBe(choice?.message.content);
      });

      it("chat streamed: the role chunk carries the prompt's ids, " +
        "the others their tokens' ids; joined, the whole answer's", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const whole = await (await call(app, "/v1/chat/completions", chat())).json<ChatResponse>();
        const chunks = await chunksOf<ChatChunk>(
          await call(
            app,
            "/v1/chat/completions",
            chat({ stream: true, stream_options: { include_usage: true } }),
          ),
        );
        expect(chunks[0]?.prompt_token_ids).toEqual(whole.prompt_token_ids);
        expect(chunks[0]?.choices[0]).not.toHaveProperty("token_ids");
        const choiceChunks = chunks.slice(1).filter((chunk) => chunk.choices.length > 0);
        for (const chunk of choiceChunks) {
          expect(chunk).not.toHaveProperty("prompt_token_ids");
          expect(Array.isArray(chunk.choices[0]?.token_ids)).toBe(true);
        }
        expect(choiceChunks.flatMap((chunk) => chunk.choices[0]?.token_ids ?? [])).toEqual(
          whole.choices[0]?.token_ids,
        );
        expect(choiceChunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(
          whole.choices[0]?.message.content,
        );
        expect(choiceChunks.at(-1)?.choices[0]).toMatchObject({
          finish_reason: "length",
          token_ids: [],
        });
        // Not asked: the per-token chunks are OpenAI's, without the key.
        const plain = await chunksOf<ChatChunk>(
          await call(app, "/v1/chat/completions", chat({ stream: true, return_token_ids: null })),
        );
        for (const chunk of plain) {
          expect(chunk).not.toHaveProperty("prompt_token_ids");
          expect(chunk.choices[0]).not.toHaveProperty("token_ids");
        }
      });

      it("completions: each choice with the prompt's ids and its " +
        "own; streamed, the prompt's on the first chunk only", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const whole = await (
          await call(app, "/v1/completions", completion())
        ).json<CompletionResponse>();
        const [choice] = whole.choices;
        expect(choice?.prompt_token_ids).toEqual(
          await tokenize(app, { prompt: "The old man walked slowly down the road" }),
        );
        expect(choice?.token_ids).toHaveLength(whole.usage.completion_tokens);
        expect(await detokenize(app, choice?.token_ids ?? [])).toBe(choice?.text);
        const chunks = await chunksOf<CompletionChunk>(
          await call(app, "/v1/completions", completion({ stream: true })),
        );
        expect(chunks[0]?.choices[0]?.prompt_token_ids).toEqual(choice?.prompt_token_ids);
        for (const chunk of chunks.slice(1))
          expect(chunk.choices[0]).not.toHaveProperty("prompt_token_ids");
        for (const chunk of chunks) expect(Array.isArray(chunk.choices[0]?.token_ids)).toBe(true);
        expect(chunks.flatMap((chunk) => chunk.choices[0]?.token_ids ?? [])).toEqual(
          choice?.token_ids,
        );
        expect(chunks.map((chunk) => chunk.choices[0]?.text ?? "").join("")).toBe(choice?.text);
      });

      it("a prompt of token ids comes back as it was sent; with logprobs, one id per entry", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const ids = await tokenize(app, {
          prompt: "In the morning the city was quiet and",
          add_special_tokens: false,
        });
        const body = await (
          await call(app, "/v1/completions", completion({ prompt: ids, logprobs: 1 }))
        ).json<CompletionResponse & { choices: { logprobs: { tokens: string[] } }[] }>();
        expect(body.choices[0]?.prompt_token_ids).toEqual(ids);
        expect(body.choices[0]?.logprobs.tokens).toHaveLength(
          body.choices[0]?.token_ids?.length ?? -1,
        );
      });

      it("a stop token id and the token that completes a " +
        "stop string are among the ids, as in the usage", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const free = (
          await (
            await call(app, "/v1/completions", completion({ max_tokens: 8 }))
          ).json<CompletionResponse>()
        ).choices[0]!;
        const stopId = free.token_ids![3]!;
        const stopped = await (
          await call(
            app,
            "/v1/completions",
            completion({ max_tokens: 8, stop_token_ids: [stopId] }),
          )
        ).json<CompletionResponse>();
        // The first occurrence of the stop id ends it; it is the last id, its text not in the
        // answer.
        const upTo = free.token_ids!.indexOf(stopId) + 1;
        expect(stopped.choices[0]).toMatchObject({
          finish_reason: "stop",
          stop_reason: stopId,
          token_ids: free.token_ids!.slice(0, upTo),
        });
        expect(stopped.choices[0]?.text).toBe(
          await detokenize(app, free.token_ids!.slice(0, upTo - 1)),
        );
        expect(stopped.usage.completion_tokens).toBe(upTo);
        // A stop string: the ids run to the token that completed it, though its text is cut.
        const stop = free.text.slice(4, 7);
        const cut = await (
          await call(app, "/v1/completions", completion({ max_tokens: 8, stop: [stop] }))
        ).json<CompletionResponse>();
        expect(cut.choices[0]?.finish_reason).toBe("stop");
        expect(cut.choices[0]?.text).toBe(free.text.slice(0, free.text.indexOf(stop)));
        const ids = cut.choices[0]?.token_ids ?? [];
        expect(ids).toHaveLength(cut.usage.completion_tokens);
        expect(ids).toEqual(free.token_ids!.slice(0, ids.length));
        expect(await detokenize(app, ids)).toContain(stop);
        expect(await detokenize(app, ids.slice(0, -1))).not.toContain(stop);
      });

      it("n choices each carry their own ids, streamed and not", { timeout: 60_000 }, async () => {
        const app = await appOf();
        const sampled = { n: 2, temperature: 1, seed: 11, max_tokens: 8 };
        const body = await (
          await call(app, "/v1/chat/completions", chat(sampled))
        ).json<ChatResponse>();
        expect(body.choices).toHaveLength(2);
        expect(body.choices.reduce((sum, choice) => sum + (choice.token_ids?.length ?? 0), 0)).toBe(
          body.usage.completion_tokens,
        );
        const chunks = await chunksOf<ChatChunk>(
          await call(app, "/v1/chat/completions", chat({ ...sampled, stream: true })),
        );
        for (const index of [0, 1]) {
          const own = chunks.filter((chunk) => chunk.choices[0]?.index === index);
          expect(own[0]?.prompt_token_ids).toEqual(body.prompt_token_ids);
          expect(own.flatMap((chunk) => chunk.choices[0]?.token_ids ?? [])).toEqual(
            body.choices[index]?.token_ids,
          );
        }
      });
    });
  }
});

interface UsageChunk {
  choices: {
    index: number;
    delta?: { content?: string };
    text?: string;
    finish_reason: string | null;
    token_ids?: number[];
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

// vLLM's stream_options.continuous_usage_stats (serving_chat.py / serving_completion.py: with
// include_usage, each chunk of choice i carries UsageInfo(prompt_tokens, previous_num_tokens[i]);
// the last chunk, choices: [], the usage of all), as load generators and RL loops read it.
describe.skipIf(origin === null)("continuous_usage_stats, on the origin and in the isolate", () => {
  const continuous = {
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  };
  const places: [string, () => Promise<App>][] = [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];
  for (const [place, appOf] of places) {
    it(`${place}: chat: every chunk carries the usage so far, ` +
      "the finish chunk the choice's, the last chunk all of it", {
      timeout: 60_000,
    }, async () => {
      const app = await appOf();
      const whole = await (
        await call(app, "/v1/chat/completions", chat({ return_token_ids: false }))
      ).json<ChatResponse>();
      const chunks = await chunksOf<UsageChunk>(
        await call(app, "/v1/chat/completions", chat({ return_token_ids: false, ...continuous })),
      );
      const prompt = whole.usage.prompt_tokens;
      expect(chunks[0]?.usage).toEqual({
        prompt_tokens: prompt,
        completion_tokens: 0,
        total_tokens: prompt,
      });
      const counts = chunks.slice(0, -1).map((chunk) => chunk.usage?.completion_tokens ?? -1);
      expect([...counts].sort((a, b) => a - b)).toEqual(counts);
      for (const chunk of chunks.slice(0, -1))
        expect(chunk.usage?.total_tokens).toBe(prompt + (chunk.usage?.completion_tokens ?? 0));
      expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("length");
      expect(counts.at(-1)).toBe(whole.usage.completion_tokens);
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: whole.usage });
      expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe(
        whole.choices[0]?.message.content,
      );
      for (const chunk of chunks) expect(chunk.choices[0] ?? {}).not.toHaveProperty("token_ids");
    });

    it(`${place}: completions, n: 2 with return_token_ids: ` +
      "each chunk counts its own choice's tokens", {
      timeout: 60_000,
    }, async () => {
      const app = await appOf();
      const chunks = await chunksOf<UsageChunk>(
        await call(
          app,
          "/v1/completions",
          completion({ n: 2, temperature: 1, seed: 3, max_tokens: 10, ...continuous }),
        ),
      );
      const seen = [0, 0];
      for (const chunk of chunks.slice(0, -1)) {
        const choice = chunk.choices[0]!;
        seen[choice.index] = seen[choice.index]! + (choice.token_ids?.length ?? 0);
        expect(chunk.usage?.completion_tokens).toBe(seen[choice.index]);
      }
      expect(chunks.at(-1)?.usage?.completion_tokens).toBe(seen[0]! + seen[1]!);
      // Without include_usage it asks for nothing (as vLLM's): no usage member at all.
      const plain = await chunksOf<UsageChunk>(
        await call(
          app,
          "/v1/completions",
          completion({
            return_token_ids: false,
            stream: true,
            stream_options: { continuous_usage_stats: true },
          }),
        ),
      );
      for (const chunk of plain) expect(chunk).not.toHaveProperty("usage");
    });
  }
});

// vLLM's truncate_prompt_tokens (vllm/entrypoints/openai/protocol.py, ge=-1; serving_engine.py
// keeps the prompt's last k tokens and refuses k above max_model_len with the message below).
describe.skipIf(origin === null)("truncate_prompt_tokens", () => {
  const app = appOnOrigin(origin?.url ?? "");
  const long = Array.from({ length: 600 }, (_, i) => 200 + (i % 300));

  it("keeps the prompt's last k tokens: the answer is the one for those tokens alone", {
    timeout: 60_000,
  }, async () => {
    const cut = await (
      await call(
        app,
        "/v1/completions",
        completion({ prompt: long, truncate_prompt_tokens: 50, max_tokens: 8 }),
      )
    ).json<CompletionResponse>();
    expect(cut.usage.prompt_tokens).toBe(50);
    expect(cut.choices[0]?.prompt_token_ids).toEqual(long.slice(-50));
    const alone = await (
      await call(app, "/v1/completions", completion({ prompt: long.slice(-50), max_tokens: 8 }))
    ).json<CompletionResponse>();
    expect(cut.choices[0]?.text).toBe(alone.choices[0]?.text);
    // Without it the same prompt is past the context.
    expect(
      (await problem(await call(app, "/v1/completions", completion({ prompt: long })))).code,
    ).toBe("context_length_exceeded");
  });

  it("applies to chat after the template; a prompt " +
    "already shorter (or -1, the context) is unchanged", {
    timeout: 60_000,
  }, async () => {
    const whole = await (
      await call(app, "/v1/chat/completions", chat({ max_tokens: 4 }))
    ).json<ChatResponse>();
    const cut = await (
      await call(app, "/v1/chat/completions", chat({ max_tokens: 4, truncate_prompt_tokens: 5 }))
    ).json<ChatResponse>();
    expect(cut.prompt_token_ids).toEqual(whole.prompt_token_ids?.slice(-5));
    for (const keep of [whole.usage.prompt_tokens, 400, -1]) {
      const same = await (
        await call(
          app,
          "/v1/chat/completions",
          chat({ max_tokens: 4, truncate_prompt_tokens: keep }),
        )
      ).json<ChatResponse>();
      expect(same.prompt_token_ids, String(keep)).toEqual(whole.prompt_token_ids);
    }
  });

  it("0, below -1, not an integer, or above the context: 400 naming it", async () => {
    for (const value of [0, -2, 1.5, "5"]) {
      expect(
        await problem(
          await call(app, "/v1/completions", completion({ truncate_prompt_tokens: value })),
        ),
        String(value),
      ).toMatchObject({ status: 400, field: "truncate_prompt_tokens" });
    }
    const above = await problem(
      await call(app, "/v1/chat/completions", chat({ truncate_prompt_tokens: 513 })),
    );
    expect(above).toMatchObject({
      status: 400,
      field: "truncate_prompt_tokens",
      error: { param: "truncate_prompt_tokens" },
    });
    expect(above.detail).toBe(
      "truncate_prompt_tokens value (513) is greater than " +
        "max_model_len (512). Please, select a smaller truncation size.",
    );
  });
});

describe.skipIf(origin === null)("bad return_token_ids: 400 naming the field", () => {
  const app = appOnOrigin(origin?.url ?? "");
  for (const [path, body] of [
    ["/v1/chat/completions", chat({ return_token_ids: "yes" })],
    ["/v1/completions", completion({ return_token_ids: 1 })],
  ] as const) {
    it(`${path}: a value that is not a boolean`, async () => {
      const response = await call(app, path, body);
      expect(response.status).toBe(400);
      expect(await problem(response)).toMatchObject({
        field: "return_token_ids",
        error: { param: "return_token_ids" },
      });
    });
  }
  it("the Workers AI shape does not take it (it answers {response})", async () => {
    const response = await call(app, "/v1/run/tiny-llm", {
      prompt: "Hello",
      return_token_ids: true,
    });
    expect(response.status).toBe(400);
    expect(await problem(response)).toMatchObject({ field: "return_token_ids" });
  });
});

// vLLM's allowed_token_ids (vllm/sampling_params.py; its sampler masks every other id to -inf):
// classification by generation, constrained to the label tokens, on both runtimes alike.
describe.skipIf(origin === null)("allowed_token_ids, on the origin and in the isolate", () => {
  const allowed = [300, 301, 302, 2];
  const places: [string, () => Promise<App>][] = [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];
  const sampled = new Map<string, number[]>();
  for (const [place, appOf] of places) {
    it(`${place}: only the listed ids come out, sampled ` +
      "or greedy; greedy takes the likeliest of them", {
      timeout: 60_000,
    }, async () => {
      const app = await appOf();
      const body = await (
        await call(
          app,
          "/v1/completions",
          completion({
            max_tokens: 16,
            temperature: 1.5,
            seed: 9,
            ignore_eos: true,
            allowed_token_ids: allowed,
          }),
        )
      ).json<CompletionResponse>();
      const ids = body.choices[0]?.token_ids ?? [];
      expect(ids).toHaveLength(16);
      expect(ids.every((id) => allowed.includes(id))).toBe(true);
      sampled.set(place, ids);
      // Greedy: the first id is the listed one the model ranks highest (its raw logprobs, vLLM's,
      // are unmasked).
      const greedy = await (
        await call(
          app,
          "/v1/completions",
          completion({
            prompt: [1, 333, 268],
            max_tokens: 1,
            allowed_token_ids: allowed,
            logprobs: 0,
          }),
        )
      ).json<CompletionResponse>();
      const first = greedy.choices[0]?.token_ids?.[0];
      expect(allowed).toContain(first);
      const scores = await Promise.all(
        allowed.map(async (id) => {
          const echoed = await (
            await call(app, "/v1/completions", {
              model: "tiny-llm",
              prompt: [1, 333, 268, id],
              max_tokens: 0,
              echo: true,
              logprobs: 0,
            })
          ).json<{ choices: { logprobs: { token_logprobs: number[] } }[] }>();
          return [id, echoed.choices[0]!.logprobs.token_logprobs.at(-1)!] as const;
        }),
      );
      expect(first).toBe(scores.reduce((best, next) => (next[1] > best[1] ? next : best))[0]);
    });
  }
  it("both places sample the same ids from the same seed", () => {
    if (sampled.size === 2)
      expect(sampled.get("in-isolate WASM loop")).toEqual(sampled.get("origin"));
  });

  it("empty, negative or outside the vocabulary: 4xx naming the field", async () => {
    const app = appOnOrigin(origin?.url ?? "");
    expect(
      await problem(await call(app, "/v1/completions", completion({ allowed_token_ids: [] }))),
    ).toMatchObject({ status: 400, field: "allowed_token_ids" });
    expect(
      await problem(await call(app, "/v1/chat/completions", chat({ allowed_token_ids: [5, -1] }))),
    ).toMatchObject({ status: 400, field: "allowed_token_ids.1" });
    expect(
      await problem(
        await call(app, "/v1/completions", completion({ allowed_token_ids: [5, 99_999] })),
      ),
    ).toMatchObject({ status: 422, field: "allowed_token_ids.1" });
  });
});
