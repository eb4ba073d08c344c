// Batched prompts on /v1/completions: OpenAI's list form (strings or lists of token ids), as
// lm-evaluation-harness sends its batches (lm_eval/models/api_models.py with batch_size > 1:
// `prompt` a list of id lists). Each prompt is a generation of its own, choices indexed as
// vLLM's (vllm-project/vllm vllm/entrypoints/openai/serving_completion.py: `i = output.index +
// prompt_idx * num_choices`; the usage sums every prompt's tokens and every completion's).
// Non-streamed batches run six generations at a time (a Worker invocation's connections);
// streamed ones hold at most six. Both places: the reference origin and the isolate's WASM loop.
import { describe, expect, inject, it } from "vitest";
import {
  appInIsolate,
  appOnOrigin,
  call,
  sseEvents,
  type App,
} from "../../support/workers/generation";

const origin = inject("llmOrigin");

interface Choice {
  index: number;
  text: string;
  finish_reason: string | null;
  prompt_token_ids?: number[];
  token_ids?: number[];
  logprobs: { token_logprobs: Array<number | null> } | null;
}
interface CompletionResponse {
  choices: Choice[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const PROMPTS = [
  "The old man walked slowly down the road",
  "She opened the door and",
  "In the morning the river",
  "He said that the",
  "The house was",
  "A small boat",
  "They waited until",
  "The letter came on",
];

async function complete(app: App, body: Record<string, unknown>): Promise<CompletionResponse> {
  const response = await call(app, "/v1/completions", { model: "tiny-llm", ...body });
  expect(response.status, await response.clone().text()).toBe(200);
  return await response.json<CompletionResponse>();
}

describe.skipIf(origin === null)("batched prompts, on the origin and in the isolate", () => {
  const places: [string, () => Promise<App>][] = [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];
  for (const [place, appOf] of places) {
    describe(place, () => {
      it("eight prompts (more than six run at once): each choice " +
        "is its prompt's own answer, in order; the usage sums them", {
        timeout: 90_000,
      }, async () => {
        const app = await appOf();
        const request = { max_tokens: 6, temperature: 0, return_token_ids: true };
        const singles = await Promise.all(
          PROMPTS.map((prompt) => complete(app, { ...request, prompt })),
        );
        const batch = await complete(app, { ...request, prompt: PROMPTS });
        expect(batch.choices.map((choice) => choice.index)).toEqual(PROMPTS.map((_, i) => i));
        batch.choices.forEach((choice, i) => {
          expect(choice.text).toBe(singles[i]!.choices[0]!.text);
          expect(choice.prompt_token_ids).toEqual(singles[i]!.choices[0]!.prompt_token_ids);
        });
        const prompt = singles.reduce((sum, single) => sum + single.usage.prompt_tokens, 0);
        const completion = singles.reduce((sum, single) => sum + single.usage.completion_tokens, 0);
        // (On the origin, the singles left the prompts in its prefix cache: the batch's usage says
        // so too.)
        expect(batch.usage).toMatchObject({
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
        });
      });

      it("lm-eval's batched loglikelihood request ([[ids], " +
        "[ids]], echo, logprobs 1): each prompt scored as alone", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const ids = await Promise.all(
          PROMPTS.slice(0, 3).map(
            async (prompt) =>
              (
                await (
                  await call(app, "/tokenize", { model: "tiny-llm", prompt })
                ).json<{ tokens: number[] }>()
              ).tokens,
          ),
        );
        const request = { temperature: 0, max_tokens: 1, logprobs: 1, seed: 1234, echo: true };
        const batch = await complete(app, { ...request, prompt: ids });
        for (const [i, prompt] of ids.entries()) {
          const single = await complete(app, { ...request, prompt: [prompt] });
          const [batched, alone] = [
            batch.choices[i]!.logprobs!.token_logprobs,
            single.choices[0]!.logprobs!.token_logprobs,
          ];
          expect(batched).toHaveLength(prompt.length + 1);
          batched.forEach((value, at) =>
            value === null
              ? expect(alone[at]).toBeNull()
              : expect(value).toBeCloseTo(alone[at]!, 4),
          );
        }
      });

      it("n per prompt: choice i·n + j is prompt i's choice j, sampled with seed + j", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const request = { max_tokens: 6, temperature: 1, seed: 21, n: 2 };
        const batch = await complete(app, { ...request, prompt: PROMPTS.slice(0, 2) });
        expect(batch.choices).toHaveLength(4);
        for (const [i, prompt] of PROMPTS.slice(0, 2).entries()) {
          const single = await complete(app, { ...request, prompt });
          expect([batch.choices[2 * i]!.text, batch.choices[2 * i + 1]!.text]).toEqual(
            single.choices.map((choice) => choice.text),
          );
        }
      });

      it("streamed: each choice's chunks carry its index; " +
        "joined, the non-streamed batch; one usage chunk for all", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const request = {
          prompt: PROMPTS.slice(0, 3),
          max_tokens: 5,
          temperature: 0,
          n: 2,
          echo: true,
        };
        const whole = await complete(app, request);
        const events = await sseEvents(
          await call(app, "/v1/completions", {
            model: "tiny-llm",
            ...request,
            stream: true,
            stream_options: { include_usage: true },
          }),
        );
        expect(events.at(-1)).toBe("[DONE]");
        const chunks = events
          .slice(0, -1)
          .map(
            (event) =>
              JSON.parse(event) as { choices: Choice[]; usage: CompletionResponse["usage"] | null },
          );
        const texts: string[] = [];
        for (const chunk of chunks)
          for (const choice of chunk.choices)
            texts[choice.index] = (texts[choice.index] ?? "") + choice.text;
        expect(texts).toEqual(whole.choices.map((choice) => choice.text));
        expect(texts[2]!.startsWith(PROMPTS[1]!)).toBe(true);
        expect(chunks.filter((chunk) => chunk.usage !== null)).toEqual([
          expect.objectContaining({ choices: [], usage: whole.usage }),
        ]);
      });
    });
  }
});
