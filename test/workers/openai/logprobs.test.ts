// Logprobs through the edge, both places: OpenAI's chat shape (`logprobs: true`,
// `top_logprobs`) and its completions shape (`logprobs: n`), as vLLM fills them
// (vllm-project/vllm vllm/entrypoints/openai/serving_chat.py _create_chat_logprobs /
// _get_top_logprobs, serving_completion.py _create_completion_logprobs: values floored at
// -9999, the completions dict holding the sampled token first). The tiny LLM runs on the
// reference origin (vLLM's wire format, ids as "token_id:N") and in the isolate's WASM loop on
// the same FP32 graph: the same tokens and, to float precision, the same numbers.
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

interface Top {
  token: string;
  logprob: number;
  bytes: number[] | null;
}
interface Entry extends Top {
  top_logprobs: Top[];
}
interface ChatResponse {
  choices: {
    message: { content: string };
    logprobs: { content: Entry[]; refusal: null } | null;
    finish_reason: string;
    stop_reason: string | number | null;
  }[];
  usage: { completion_tokens: number };
}
interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}
interface CompletionResponse {
  choices: {
    text: string;
    logprobs: CompletionLogprobs | null;
    finish_reason: string;
    stop_reason: string | number | null;
  }[];
  usage: { completion_tokens: number };
}

const messages = [{ role: "user", content: "Tell me about the old house by the river." }];
const chat = (extra: Record<string, unknown> = {}) => ({
  model: "tiny-llm",
  messages,
  max_tokens: 20,
  temperature: 0,
  logprobs: true,
  top_logprobs: 3,
  ...extra,
});
const completion = (extra: Record<string, unknown> = {}) => ({
  model: "tiny-llm",
  prompt: "The old man walked slowly down the road",
  max_tokens: 20,
  temperature: 0,
  logprobs: 2,
  ...extra,
});
const codePoints = (text: string) => [...text].length;
const utf8 = (bytes: readonly number[]) => new TextDecoder().decode(Uint8Array.from(bytes));

/**
 * What every chat logprobs answer holds: one entry per completion token, the top sorted, greedy's
 * pick the likeliest.
 */
function expectChatLogprobs(body: ChatResponse, top: number, greedy: boolean): Entry[] {
  const [choice] = body.choices;
  const content = choice?.logprobs?.content ?? [];
  expect(content).toHaveLength(body.usage.completion_tokens);
  // The tokens' own bytes make the text (no stop string here: nothing of it is held back).
  if (choice?.finish_reason === "length")
    expect(utf8(content.flatMap((entry) => entry.bytes ?? []))).toBe(choice.message.content);
  for (const entry of content) {
    expect(entry.top_logprobs).toHaveLength(top);
    expect(entry.logprob).toBeLessThanOrEqual(0);
    const values = entry.top_logprobs.map((other) => other.logprob);
    expect([...values].sort((a, b) => b - a)).toEqual(values);
    expect(values.reduce((sum, value) => sum + Math.exp(value), 0)).toBeLessThanOrEqual(1 + 1e-9);
    for (const other of entry.top_logprobs)
      expect(utf8(other.bytes ?? []).replace(/\uFFFD/g, "")).toBe(
        other.token.replace(/\uFFFD/g, ""),
      );
    if (greedy && top > 0)
      expect(entry.top_logprobs[0]).toEqual({
        token: entry.token,
        logprob: entry.logprob,
        bytes: entry.bytes,
      });
  }
  return content;
}

function expectCompletionLogprobs(body: CompletionResponse, count: number): CompletionLogprobs {
  const [choice] = body.choices;
  const logprobs = choice?.logprobs;
  if (!logprobs) throw new Error("no logprobs");
  const n = body.usage.completion_tokens;
  expect([
    logprobs.tokens.length,
    logprobs.token_logprobs.length,
    logprobs.top_logprobs.length,
    logprobs.text_offset.length,
  ]).toEqual([n, n, n, n]);
  logprobs.tokens.forEach((token, i) => {
    const dict = Object.entries(logprobs.top_logprobs[i]!);
    // vLLM's dict: the sampled token first, then the likeliest (up to logprobs + 1 entries).
    expect(dict[0]).toEqual([token, logprobs.token_logprobs[i]]);
    expect(dict.length).toBeLessThanOrEqual(count + 1);
    expect(dict.length).toBeGreaterThanOrEqual(Math.min(count, 1));
    expect(logprobs.text_offset[i]).toBe(
      i === 0 ? 0 : logprobs.text_offset[i - 1]! + codePoints(logprobs.tokens[i - 1]!),
    );
  });
  return logprobs;
}

describe.skipIf(origin === null)("logprobs, on the origin and in the isolate", () => {
  const places: [string, () => Promise<App>][] = [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];

  for (const [place, appOf] of places) {
    describe(place, () => {
      it("chat: one entry per generated token, top_logprobs " +
        "sorted, greedy's token the likeliest; the text unchanged", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const body = await (await call(app, "/v1/chat/completions", chat())).json<ChatResponse>();
        expectChatLogprobs(body, 3, true);
        expect(body.choices[0]?.logprobs?.refusal).toBeNull();
        const plain = await (
          await call(app, "/v1/chat/completions", chat({ logprobs: false, top_logprobs: 0 }))
        ).json<ChatResponse>();
        expect(plain.choices[0]?.logprobs).toBeNull();
        expect(plain.choices[0]?.message.content).toBe(body.choices[0]?.message.content);
      });

      it("chat streamed: the chunks' logprobs joined equal the whole answer's", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const whole = await (
          await call(app, "/v1/chat/completions", chat({ top_logprobs: 2 }))
        ).json<ChatResponse>();
        const events = await sseEvents(
          await call(app, "/v1/chat/completions", chat({ top_logprobs: 2, stream: true })),
        );
        expect(events.at(-1)).toBe("[DONE]");
        const chunks = events.slice(0, -1).map(
          (event) =>
            JSON.parse(event) as {
              choices: { delta: { content?: string }; logprobs: { content: Entry[] } | null }[];
            },
        );
        const streamed = chunks.flatMap((chunk) => chunk.choices[0]?.logprobs?.content ?? []);
        expect(streamed).toEqual(whole.choices[0]?.logprobs?.content);
        expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(
          whole.choices[0]?.message.content,
        );
        // The role chunk and the finish chunk carry none.
        expect(chunks[0]?.choices[0]?.logprobs).toBeNull();
        expect(chunks.at(-1)?.choices[0]?.logprobs).toBeNull();
      });

      it("completions: vLLM's dict (the sampled token first), offsets, the same numbers streamed", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const whole = await (
          await call(app, "/v1/completions", completion())
        ).json<CompletionResponse>();
        const logprobs = expectCompletionLogprobs(whole, 2);
        expect(logprobs.tokens.join("")).toBe(whole.choices[0]?.text);
        const events = await sseEvents(
          await call(app, "/v1/completions", completion({ stream: true })),
        );
        const chunks = events.slice(0, -1).map(
          (event) =>
            JSON.parse(event) as {
              choices: { text: string; logprobs: CompletionLogprobs | null }[];
            },
        );
        const joined = {
          tokens: [] as string[],
          token_logprobs: [] as number[],
          top_logprobs: [] as Record<string, number>[],
          text_offset: [] as number[],
        };
        for (const chunk of chunks) {
          const part = chunk.choices[0]?.logprobs;
          if (!part) continue;
          joined.tokens.push(...part.tokens);
          joined.token_logprobs.push(...part.token_logprobs);
          joined.top_logprobs.push(...part.top_logprobs);
          joined.text_offset.push(...part.text_offset);
        }
        expect(joined).toEqual(logprobs);
      });

      it("logprobs: 0 gives each token's own logprob alone; asking changes no sampled token", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const seeded = { temperature: 1, seed: 4242, max_tokens: 16 };
        const asked = await (
          await call(app, "/v1/completions", completion({ ...seeded, logprobs: 0 }))
        ).json<CompletionResponse>();
        const plain = await (
          await call(app, "/v1/completions", completion({ ...seeded, logprobs: null }))
        ).json<CompletionResponse>();
        expect(asked.choices[0]?.text).toBe(plain.choices[0]?.text);
        expect(plain.choices[0]?.logprobs).toBeNull();
        for (const dict of expectCompletionLogprobs(asked, 0).top_logprobs)
          expect(Object.keys(dict)).toHaveLength(1);
      });

      it("a stop token id has its entry too (it is " +
        "counted in the usage), and a stop string's token", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const first = await (
          await call(app, "/v1/completions", completion({ max_tokens: 8, logprobs: null }))
        ).json<CompletionResponse>();
        const text = first.choices[0]?.text ?? "";
        const ids = (
          await (
            await call(app, "/tokenize", {
              model: "tiny-llm",
              prompt: text,
              add_special_tokens: false,
            })
          ).json<{ tokens: number[] }>()
        ).tokens;
        const stopId = ids[2]!;
        const stopped = await (
          await call(
            app,
            "/v1/completions",
            completion({ max_tokens: 8, stop_token_ids: [stopId] }),
          )
        ).json<CompletionResponse>();
        expect(stopped.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: stopId });
        const logprobs = expectCompletionLogprobs(stopped, 2);
        const stopText = (
          await (
            await call(app, "/detokenize", { model: "tiny-llm", tokens: [stopId] })
          ).json<{ prompt: string }>()
        ).prompt;
        expect(logprobs.tokens.at(-1)).toBe(stopText);
        // A stop string: its text never sent, the token that completed it still has its entry.
        const stop = text.slice(codePoints(text) > 6 ? 3 : 1, codePoints(text) > 6 ? 6 : 2);
        const cut = await (
          await call(app, "/v1/chat/completions", chat({ stop: [stop], max_tokens: 8 }))
        ).json<ChatResponse>();
        if (cut.choices[0]?.finish_reason === "stop")
          expect(cut.choices[0].message.content).not.toContain(stop);
        expect(cut.choices[0]?.logprobs?.content).toHaveLength(cut.usage.completion_tokens);
      });

      it("n choices each carry their own", { timeout: 60_000 }, async () => {
        const app = await appOf();
        const body = await (
          await call(
            app,
            "/v1/chat/completions",
            chat({ n: 2, temperature: 1, seed: 5, max_tokens: 8 }),
          )
        ).json<ChatResponse>();
        expect(body.choices).toHaveLength(2);
        const total = body.choices.reduce(
          (sum, choice) => sum + (choice.logprobs?.content.length ?? 0),
          0,
        );
        expect(total).toBe(body.usage.completion_tokens);
      });
    });
  }

  it("the same tokens and, to float precision, the same logprobs both places (one FP32 graph)", {
    timeout: 120_000,
  }, async () => {
    const remote = appOnOrigin(origin?.url ?? "");
    const local = await appInIsolate(origin?.faultyUrl ?? "");
    for (const prompt of [
      "The old man walked slowly down the road",
      "In the morning the city was quiet and",
    ]) {
      const body = completion({ prompt, logprobs: 5, max_tokens: 24 });
      const [a, b] = [
        await (await call(remote, "/v1/completions", body)).json<CompletionResponse>(),
        await (await call(local, "/v1/completions", body)).json<CompletionResponse>(),
      ];
      const [onOrigin, inIsolate] = [a.choices[0]!.logprobs!, b.choices[0]!.logprobs!];
      expect(inIsolate.tokens).toEqual(onOrigin.tokens);
      inIsolate.token_logprobs.forEach((value, i) =>
        expect(value).toBeCloseTo(onOrigin.token_logprobs[i]!, 4),
      );
      inIsolate.top_logprobs.forEach((dict, i) => {
        expect(Object.keys(dict)).toEqual(Object.keys(onOrigin.top_logprobs[i]!));
        for (const [token, value] of Object.entries(dict))
          expect(value).toBeCloseTo(onOrigin.top_logprobs[i]![token]!, 4);
      });
    }
  });
});

describe.skipIf(origin === null)("bad logprobs requests: 400 naming the field", () => {
  const app = appOnOrigin(origin?.url ?? "");
  const cases: [string, string, Record<string, unknown>, string][] = [
    [
      "top_logprobs without logprobs",
      "/v1/chat/completions",
      chat({ logprobs: false, top_logprobs: 2 }),
      "top_logprobs",
    ],
    ["top_logprobs 21", "/v1/chat/completions", chat({ top_logprobs: 21 }), "top_logprobs"],
    ["top_logprobs -1", "/v1/chat/completions", chat({ top_logprobs: -1 }), "top_logprobs"],
    ["chat logprobs as a number", "/v1/chat/completions", chat({ logprobs: 3 }), "logprobs"],
    ["completions logprobs 21", "/v1/completions", completion({ logprobs: 21 }), "logprobs"],
    ["completions logprobs true", "/v1/completions", completion({ logprobs: true }), "logprobs"],
    ["completions logprobs 1.5", "/v1/completions", completion({ logprobs: 1.5 }), "logprobs"],
    [
      "completions top_logprobs",
      "/v1/completions",
      completion({ top_logprobs: 2 }),
      "top_logprobs",
    ],
  ];
  it(
    "an origin that allows fewer (vLLM with --max-logprobs " +
      "5): its 400, naming logprobs, before any byte",
    async () => {
      const limited = appOnOrigin(`${origin?.faultyUrl ?? ""}/max-logprobs-5`);
      for (const stream of [false, true]) {
        const response = await call(
          limited,
          "/v1/completions",
          completion({ logprobs: 6, stream }),
        );
        expect(response.status).toBe(400);
        const answer = await problem(response);
        expect(answer).toMatchObject({ field: "logprobs", error: { param: "logprobs" } });
        expect(answer.detail).toContain("greater than max allowed: 5");
      }
    },
  );

  for (const [what, path, body, field] of cases) {
    it(`${what} → 400 naming ${field}`, async () => {
      const response = await call(app, path, body);
      expect(response.status).toBe(400);
      const answer = await problem(response);
      expect(answer.field, answer.detail).toBe(field);
      expect(answer.error).toMatchObject({ param: field });
    });
  }
});
