// Completions' `echo`, with logprobs: the prompt scored token by token, as lm-evaluation-harness
// asks for and reads it for its loglikelihood tasks (multiple choice, perplexity):
// EleutherAI/lm-evaluation-harness lm_eval/models/openai_completions.py (LocalCompletionsAPI.
// _create_payload: `{prompt: [[ids]], temperature: 0, max_tokens: 1, logprobs: 1, seed: 1234,
// echo: true}`; parse_logprobs: the continuation's logprob is sum(token_logprobs[ctxlen:-1]), and
// it is greedy when each of those equals the largest value of its top_logprobs dict). Shapes as
// vLLM's (vllm-project/vllm vllm/entrypoints/openai/serving_completion.py: the prompt's entries
// first, the first with a null logprob and dict; `max_tokens: 0` with echo returns the prompt
// alone). Both places: the reference origin over vLLM's wire (its echoed first chunk) and the
// isolate's WASM loop, on the same FP32 graph.
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

interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: Array<number | null>;
  top_logprobs: Array<Record<string, number> | null>;
  text_offset: number[];
}
interface CompletionResponse {
  choices: {
    index: number;
    text: string;
    logprobs: CompletionLogprobs | null;
    finish_reason: string;
    token_ids?: number[];
  }[];
  usage: { prompt_tokens: number; completion_tokens: number };
}
interface CompletionChunk {
  choices: {
    index: number;
    text: string;
    logprobs: CompletionLogprobs | null;
    finish_reason: string | null;
  }[];
}

const CONTEXT = "The old man walked slowly down the road";

async function tokenize(app: App, prompt: string): Promise<number[]> {
  return (
    await (await call(app, "/tokenize", { model: "tiny-llm", prompt })).json<{ tokens: number[] }>()
  ).tokens;
}
async function complete(app: App, body: Record<string, unknown>): Promise<CompletionResponse> {
  const response = await call(app, "/v1/completions", { model: "tiny-llm", ...body });
  expect(response.status, await response.clone().text()).toBe(200);
  return await response.json<CompletionResponse>();
}

/** lm-evaluation-harness's loglikelihood request for a context and continuation, as ids. */
const loglikelihoodRequest = (ids: readonly number[]) => ({
  prompt: [ids],
  temperature: 0,
  max_tokens: 1,
  logprobs: 1,
  seed: 1234,
  echo: true,
});

/**
 * lm-evaluation-harness's parse_logprobs for one choice: (sum of the continuation's logprobs, is
 * greedy).
 */
function parseLogprobs(
  choice: CompletionResponse["choices"][number],
  ctxlen: number,
): [number, boolean] {
  const logprobs = choice.logprobs!;
  const continuation = logprobs.token_logprobs.slice(ctxlen, -1) as number[];
  const tops = logprobs.top_logprobs.slice(ctxlen, -1) as Record<string, number>[];
  const greedy = continuation.every((value, i) => value === Math.max(...Object.values(tops[i]!)));
  return [continuation.reduce((sum, value) => sum + value, 0), greedy];
}

describe.skipIf(origin === null)("echo with logprobs, on the origin and in the isolate", () => {
  const places: [string, () => Promise<App>][] = [
    ["origin", async () => appOnOrigin(origin?.url ?? "")],
    ["in-isolate WASM loop", async () => await appInIsolate(origin?.faultyUrl ?? "")],
  ];
  /** Per place, the prompt's echoed logprobs, to compare the places. */
  const scored = new Map<string, CompletionLogprobs>();

  for (const [place, appOf] of places) {
    describe(place, () => {
      it("lm-eval's loglikelihood request: the continuation's logprobs " +
        "are those the model gave it when generating, and greedy", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const context = await tokenize(app, CONTEXT);
        // The model's own greedy continuation, with its logprobs as generated.
        const generated = await complete(app, {
          prompt: [context],
          max_tokens: 8,
          temperature: 0,
          logprobs: 1,
          return_token_ids: true,
          ignore_eos: true,
        });
        const continuation = generated.choices[0]!.token_ids!;
        expect(continuation).toHaveLength(8);

        const body = await complete(app, loglikelihoodRequest([...context, ...continuation]));
        const [choice] = body.choices;
        const logprobs = choice!.logprobs!;
        // One entry per prompt token and one for the generated token; the first has nothing before
        // it.
        expect(logprobs.tokens).toHaveLength(context.length + continuation.length + 1);
        expect([logprobs.token_logprobs[0], logprobs.top_logprobs[0]]).toEqual([null, null]);
        expect(
          logprobs.token_logprobs
            .slice(1)
            .every((value) => typeof value === "number" && value <= 0),
        ).toBe(true);
        expect(body.usage).toEqual({
          prompt_tokens: context.length + continuation.length,
          completion_tokens: 1,
          total_tokens: context.length + continuation.length + 1,
        });
        // The text starts with the prompt's, decoded as /detokenize decodes it.
        const detokenized = await call(app, "/detokenize", {
          model: "tiny-llm",
          tokens: [...context, ...continuation],
        });
        expect(choice!.text.startsWith((await detokenized.json<{ prompt: string }>()).prompt)).toBe(
          true,
        );
        // Offsets as vLLM's: each token's start, counting the names before it.
        logprobs.tokens.forEach(
          (_, i) =>
            i > 0 &&
            expect(logprobs.text_offset[i]).toBe(
              logprobs.text_offset[i - 1]! + [...logprobs.tokens[i - 1]!].length,
            ),
        );

        const asGenerated = generated.choices[0]!.logprobs!.token_logprobs as number[];
        logprobs.token_logprobs
          .slice(context.length, -1)
          .forEach((value, i) => expect(value).toBeCloseTo(asGenerated[i]!, 4));
        const [sum, greedy] = parseLogprobs(choice!, context.length);
        expect(sum).toBeCloseTo(
          asGenerated.reduce((a, b) => a + b, 0),
          3,
        );
        expect(greedy).toBe(true);
        scored.set(place, logprobs);
      });

      it("a continuation the model would not choose is scored lower, and not greedy", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const context = await tokenize(app, CONTEXT);
        const first = await complete(app, {
          prompt: [context],
          max_tokens: 1,
          temperature: 0,
          return_token_ids: true,
          ignore_eos: true,
        });
        const best = first.choices[0]!.token_ids![0]!;
        // Greedy took the likeliest id: any other is less likely there.
        const other = best + 1;
        const [bestScore, bestGreedy] = parseLogprobs(
          (await complete(app, loglikelihoodRequest([...context, best]))).choices[0]!,
          context.length,
        );
        const [otherScore, otherGreedy] = parseLogprobs(
          (await complete(app, loglikelihoodRequest([...context, other]))).choices[0]!,
          context.length,
        );
        expect([bestGreedy, otherGreedy]).toEqual([true, false]);
        expect(otherScore).toBeLessThan(bestScore);
      });

      it("max_tokens 0: the prompt alone, scored; without logprobs its text alone", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const context = await tokenize(app, CONTEXT);
        const withNext = await complete(app, {
          prompt: CONTEXT,
          max_tokens: 1,
          temperature: 0,
          logprobs: 3,
          echo: true,
        });
        const body = await complete(app, {
          prompt: CONTEXT,
          max_tokens: 0,
          logprobs: 3,
          echo: true,
        });
        const [choice] = body.choices;
        expect(choice!.text).toBe(CONTEXT);
        expect(choice!.finish_reason).toBe("length");
        expect(body.usage).toEqual({
          prompt_tokens: context.length,
          completion_tokens: 0,
          total_tokens: context.length,
        });
        expect(choice!.logprobs!.tokens).toHaveLength(context.length);
        // The same scores as with a token generated after them.
        const prompt = withNext.choices[0]!.logprobs!;
        expect(choice!.logprobs!.tokens).toEqual(prompt.tokens.slice(0, -1));
        choice!
          .logprobs!.token_logprobs.slice(1)
          .forEach((value, i) => expect(value).toBeCloseTo(prompt.token_logprobs[i + 1]!, 5));

        const plain = await complete(app, { prompt: CONTEXT, max_tokens: 0, echo: true });
        expect(plain.choices[0]).toMatchObject({
          text: CONTEXT,
          logprobs: null,
          finish_reason: "length",
        });
        expect(plain.usage.completion_tokens).toBe(0);
        // echo without logprobs: the prompt's text, then the completion's.
        const echoed = await complete(app, {
          prompt: CONTEXT,
          max_tokens: 6,
          temperature: 0,
          echo: true,
        });
        const bare = await complete(app, { prompt: CONTEXT, max_tokens: 6, temperature: 0 });
        expect(echoed.choices[0]!.text).toBe(CONTEXT + bare.choices[0]!.text);
      });

      it("streamed: the first chunk holds the prompt's text " +
        "and logprobs; joined, the chunks are the whole answer", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const request = { prompt: CONTEXT, max_tokens: 6, temperature: 0, logprobs: 2, echo: true };
        const whole = (await complete(app, request)).choices[0]!;
        const events = await sseEvents(
          await call(app, "/v1/completions", { model: "tiny-llm", ...request, stream: true }),
        );
        expect(events.at(-1)).toBe("[DONE]");
        const chunks = events
          .slice(0, -1)
          .map((event) => JSON.parse(event) as CompletionChunk)
          .map((chunk) => chunk.choices[0]!);
        expect(chunks[0]!.text).toBe(CONTEXT);
        expect(chunks.map((chunk) => chunk.text).join("")).toBe(whole.text);
        const joined = chunks.flatMap((chunk) =>
          chunk.logprobs === null
            ? []
            : chunk.logprobs.tokens.map((token, i) => [token, chunk.logprobs!.token_logprobs[i]]),
        );
        expect(joined).toEqual(
          whole.logprobs!.tokens.map((token, i) => [token, whole.logprobs!.token_logprobs[i]]),
        );
        // Without logprobs the prompt's text still comes first.
        const plain = await sseEvents(
          await call(app, "/v1/completions", {
            model: "tiny-llm",
            prompt: CONTEXT,
            max_tokens: 3,
            echo: true,
            stream: true,
          }),
        );
        expect((JSON.parse(plain[0]!) as CompletionChunk).choices[0]!.text).toBe(CONTEXT);
      });
    });
  }

  it("both places score the prompt alike", () => {
    const [onOrigin, inIsolate] = [scored.get("origin"), scored.get("in-isolate WASM loop")];
    if (onOrigin === undefined || inIsolate === undefined) return;
    expect(inIsolate.tokens).toEqual(onOrigin.tokens);
    inIsolate.token_logprobs.forEach((value, i) =>
      value === null
        ? expect(onOrigin.token_logprobs[i]).toBeNull()
        : expect(value).toBeCloseTo(onOrigin.token_logprobs[i]!, 4),
    );
  });
});

describe("echo: bad input", () => {
  it("max_tokens 0 without echo, and a non-boolean echo, are 400s naming the field", async () => {
    const app = appOnOrigin("http://127.0.0.1:9");
    const noEcho = await call(app, "/v1/completions", {
      model: "tiny-llm",
      prompt: CONTEXT,
      max_tokens: 0,
    });
    expect(noEcho.status).toBe(400);
    expect((await problem(noEcho)).field).toBe("max_tokens");
    const notBoolean = await call(app, "/v1/completions", {
      model: "tiny-llm",
      prompt: CONTEXT,
      echo: "yes",
    });
    expect(notBoolean.status).toBe(400);
    expect((await problem(notBoolean)).field).toBe("echo");
    const negative = await call(app, "/v1/completions", {
      model: "tiny-llm",
      prompt: CONTEXT,
      max_tokens: -1,
      echo: true,
    });
    expect(negative.status).toBe(400);
  });

  it("max_tokens 0 with echo and no logprobs needs no origin", async () => {
    // Nothing to generate or score: the answer is the prompt, even with the origin unreachable.
    const body = await complete(appOnOrigin("http://127.0.0.1:9"), {
      prompt: CONTEXT,
      max_tokens: 0,
      echo: true,
    });
    expect(body.choices[0]).toMatchObject({
      text: CONTEXT,
      finish_reason: "length",
      logprobs: null,
    });
  });
});
