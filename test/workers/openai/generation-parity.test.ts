// Outcome: the same interface, both places. The shipped tiny LLM's manifest, served twice
// with only `runtime` switched — the reference origin over vLLM's protocol (its decoder
// engine on onnxruntime-node) and the in-isolate
// decode loop (onnxruntime-web WASM in workerd) — on the same FP32 graph: greedy 32-token
// continuations are identical on 20 prompts. No task or route code knows which ran.
import { describe, expect, inject, it } from "vitest";
import { appInIsolate, appOnOrigin, call } from "../../support/workers/generation";

const origin = inject("llmOrigin");

const PROMPTS = [
  "The old man walked slowly down the road",
  "In the morning the city was quiet and",
  "She looked at the letter for a long time",
  "The committee will meet again next week to",
  "It was the first time that anyone had",
  "The President said that the government",
  "After the war, many of the soldiers",
  "The children ran out into the garden",
  "He had never seen so much money in",
  "The results of the study show that",
  "When the train stopped at the station",
  "There was no reason to believe that",
  "The house on the hill had been empty",
  "Most of the people in the town were",
  "The church bells rang as the",
  "I do not know what you mean by",
  "The water in the river was cold and",
  "They decided to leave before the",
  "The new school will open in the fall",
  "At the end of the day, the",
];

interface Completion {
  choices: { text: string; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number };
}

describe.skipIf(origin === null)(
  "tiny LLM: origin vs in-isolate WASM loop, same manifest, same graph",
  () => {
    it("greedy 32-token continuations are identical on 20 prompts", {
      timeout: 300_000,
    }, async () => {
      const url = origin?.url ?? "";
      const remote = appOnOrigin(url);
      const local = await appInIsolate(origin?.faultyUrl ?? "");
      for (const prompt of PROMPTS) {
        const body = { model: "tiny-llm", prompt, max_tokens: 32, temperature: 0 };
        const [a, b] = [
          await call(remote, "/v1/completions", body),
          await call(local, "/v1/completions", body),
        ];
        expect(a.status).toBe(200);
        expect(b.status).toBe(200);
        const [onOrigin, inIsolate] = [await a.json<Completion>(), await b.json<Completion>()];
        expect(inIsolate.choices[0], prompt).toEqual(onOrigin.choices[0]);
        // The same counts (the origin may add how many prompt tokens its prefix cache served).
        expect(onOrigin.usage).toMatchObject(inIsolate.usage);
      }
    });

    it("seeded sampling gives the same text both places (one sampler, one PRNG)", {
      timeout: 120_000,
    }, async () => {
      const url = origin?.url ?? "";
      const body = {
        model: "tiny-llm",
        prompt: PROMPTS[0],
        max_tokens: 24,
        temperature: 0.9,
        top_k: 40,
        top_p: 0.95,
        seed: 1234,
      };
      const onOrigin = await (
        await call(appOnOrigin(url), "/v1/completions", body)
      ).json<Completion>();
      const inIsolate = await (
        await call(await appInIsolate(origin?.faultyUrl ?? ""), "/v1/completions", body)
      ).json<Completion>();
      expect(inIsolate.choices[0]?.text).toBe(onOrigin.choices[0]?.text);
    });

    it("n seeded choices give the same texts both places " +
      "(the in-isolate loop runs them side by side)", {
      timeout: 120_000,
    }, async () => {
      const url = origin?.url ?? "";
      const body = {
        model: "tiny-llm",
        prompt: PROMPTS[2],
        max_tokens: 16,
        temperature: 1,
        seed: 77,
        n: 3,
      };
      const onOrigin = await (
        await call(appOnOrigin(url), "/v1/completions", body)
      ).json<Completion>();
      const inIsolate = await (
        await call(await appInIsolate(origin?.faultyUrl ?? ""), "/v1/completions", body)
      ).json<Completion>();
      expect(onOrigin.choices).toHaveLength(3);
      expect(inIsolate.choices.map((choice) => choice.text)).toEqual(
        onOrigin.choices.map((choice) => choice.text),
      );
      expect(onOrigin.usage).toMatchObject(inIsolate.usage);
    });

    it("streamed choices and requests side by side in one isolate " +
      "share its session without a failed run (its runs take turns)", {
      timeout: 120_000,
    }, async () => {
      // onnxruntime-web's overlapping runs on one session read emptied input names ("input name
      // cannot be empty"): before runs took turns, this stream ended in an error event.
      const app = await appInIsolate(origin?.faultyUrl ?? "");
      const body = (prompt: string) => ({
        model: "tiny-llm",
        prompt,
        max_tokens: 12,
        temperature: 1,
        seed: 77,
        n: 2,
        stream: true,
      });
      const alone = await Promise.all(
        PROMPTS.slice(0, 3).map(async (prompt) =>
          (
            await call(app, "/v1/completions", { ...body(prompt), stream: false })
          ).json<Completion>(),
        ),
      );
      const streams = await Promise.all(
        PROMPTS.slice(0, 3).map(async (prompt) =>
          (await call(app, "/v1/completions", body(prompt))).text(),
        ),
      );
      streams.forEach((stream, i) => {
        const events = stream
          .split("\n\n")
          .filter((frame) => frame.startsWith("data: "))
          .map((frame) => frame.slice(6));
        expect(events.filter((event) => event.includes('"error"'))).toEqual([]);
        expect(events.at(-1)).toBe("[DONE]");
        const chunks = events
          .slice(0, -1)
          .map((event) => JSON.parse(event) as { choices: { index: number; text: string }[] });
        for (const index of [0, 1]) {
          const text = chunks
            .flatMap((chunk) =>
              chunk.choices.filter((choice) => choice.index === index).map((choice) => choice.text),
            )
            .join("");
          expect(text).toBe(alone[i]?.choices[index]?.text);
        }
      });
    });

    it("logit_bias and the presence, frequency and repetition " +
      "penalties give the same text both places, and change it", {
      timeout: 120_000,
    }, async () => {
      const url = origin?.url ?? "";
      const [remote, local] = [appOnOrigin(url), await appInIsolate(origin?.faultyUrl ?? "")];
      const penalties = [
        { frequency_penalty: 1.5 },
        { presence_penalty: 1, repetition_penalty: 1.3 },
        { repetition_penalty: 1.8, frequency_penalty: -0.5, temperature: 0.8, seed: 99 },
        // The bias first, then the penalties (vllm/v1/sample/sampler.py's order).
        { logit_bias: { "300": 4, "277": -100, "289": -3 }, repetition_penalty: 1.2 },
        { logit_bias: { "300": 6 }, temperature: 0.7, seed: 5 },
      ];
      for (const [i, extra] of penalties.entries()) {
        const body = {
          model: "tiny-llm",
          prompt: PROMPTS[i + 4],
          max_tokens: 32,
          temperature: 0,
          ...extra,
        };
        const [a, b, plain] = [
          await call(remote, "/v1/completions", body),
          await call(local, "/v1/completions", body),
          await call(remote, "/v1/completions", {
            ...body,
            frequency_penalty: 0,
            presence_penalty: 0,
            repetition_penalty: 1,
            logit_bias: {},
          }),
        ];
        expect(a.status).toBe(200);
        expect(b.status).toBe(200);
        const [onOrigin, inIsolate, unpenalized] = [
          await a.json<Completion>(),
          await b.json<Completion>(),
          await plain.json<Completion>(),
        ];
        expect(inIsolate.choices[0], JSON.stringify(extra)).toEqual(onOrigin.choices[0]);
        expect(onOrigin.choices[0]?.text, JSON.stringify(extra)).not.toBe(
          unpenalized.choices[0]?.text,
        );
      }
    });

    it("vLLM's ignore_eos, min_tokens and stop_token_ids give the same text both places", {
      timeout: 120_000,
    }, async () => {
      const url = origin?.url ?? "";
      const [remote, local] = [appOnOrigin(url), await appInIsolate(origin?.faultyUrl ?? "")];
      const bodies = [
        {
          model: "tiny-llm",
          prompt: "The end",
          max_tokens: 80,
          temperature: 1,
          seed: 8,
          ignore_eos: true,
          min_tokens: 12,
        },
        {
          model: "tiny-llm",
          prompt: PROMPTS[1],
          max_tokens: 32,
          temperature: 0,
          stop_token_ids: [277, 289],
          min_tokens: 4,
        },
        { model: "tiny-llm", prompt: [1, 333, 277, 418], max_tokens: 16, temperature: 0 },
      ];
      for (const body of bodies) {
        const [a, b] = [
          await call(remote, "/v1/completions", body),
          await call(local, "/v1/completions", body),
        ];
        expect(a.status).toBe(200);
        expect(b.status).toBe(200);
        const [onOrigin, inIsolate] = [await a.json<Completion>(), await b.json<Completion>()];
        expect(inIsolate.choices[0], JSON.stringify(body)).toEqual(onOrigin.choices[0]);
        // The same counts (the origin may add how many prompt tokens its prefix cache served).
        expect(onOrigin.usage).toMatchObject(inIsolate.usage);
      }
    });
  },
);
