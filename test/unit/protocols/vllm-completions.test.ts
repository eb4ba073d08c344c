// The wire format toward a vLLM origin, pinned to vLLM's own source: the request the
// adapter sends (vllm-project/vllm vllm/entrypoints/openai/protocol.py, CompletionRequest:
// prompt as token ids, return_token_ids, stop_token_ids, top_k/min_p, stream_options) and
// the chunks it reads (CompletionStreamResponse / CompletionResponseStreamChoice with
// token_ids, finish_reason, stop_reason; prompt_token_ids on the first chunk; a usage chunk
// with `choices: []`; ErrorResponse as `{"error": {...}}` — serving_completion.py).
import { describe, expect, it } from "vitest";
import {
  completionRequest,
  ErrorEvent,
  errorMessage,
} from "../../../src/protocols/vllm-completions";
import { CompletionChunk, isCompletionChunk } from "../../../src/protocols/vllm-completion-chunk";
import { echoedLogprobsOf, logprobsOf } from "../../../src/protocols/vllm-logprobs";
import { stepOf } from "../../../src/runtime/origin/vllm-steps";
import { sseData } from "../../../src/protocols/sse";
import { circuitBreaker } from "../../../src/runtime/origin/circuit-breaker";

/**
 * Chunks shaped as completion_stream_generator frames them (fields of CompletionStreamResponse,
 * nulls included).
 */
const VLLM_STREAM = `${[
  "data: " +
    '{"id":"cmpl-8f1c","object":"text_completion","created":1763870000,' +
    '"model":"tiny-llm","choices":[{"index":0,"text":" ' +
    'the","logprobs":null,"finish_reason":null,"stop_reason":null,' +
    '"token_ids":[262],"prompt_token_ids":[1,464,1110]}],"usage":null}',
  "data: " +
    '{"id":"cmpl-8f1c","object":"text_completion","created":1763870000,' +
    '"model":"tiny-llm","choices":[{"index":0,"text":" ' +
    'house","logprobs":null,"finish_reason":null,' +
    '"stop_reason":null,"token_ids":[1402]}],"usage":null}',
  "data: " +
    '{"id":"cmpl-8f1c","object":"text_completion","created":1763870000,' +
    '"model":"tiny-llm","choices":[{"index":0,"text":"","logprobs":null,' +
    '"finish_reason":"stop","stop_reason":2,"token_ids":[2]}],"usage":null}',
  "data: " +
    '{"id":"cmpl-8f1c","object":"text_completion","created":1763870000,' +
    '"model":"tiny-llm","choices":[],"usage":{"prompt_tokens":3,' +
    '"total_tokens":6,"completion_tokens":3,"prompt_tokens_details":null}}',
  "data: [DONE]",
].join("\n\n")}\n\n`;

function streamOf(text: string, cut: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += cut) controller.enqueue(bytes.slice(i, i + cut));
      controller.close();
    },
  });
}

describe("vLLM /v1/completions wire format", () => {
  it("sends the prompt as ids with return_token_ids, streaming, usage and the stop ids", () => {
    const body = completionRequest("tiny-llm", {
      promptIds: [1, 464, 1110],
      maxTokens: 32,
      stopTokenIds: [2, 6],
      sampling: { temperature: 0.7, topP: 0.9, topK: 0, minP: 0.05, seed: 42 },
    });
    expect(body).toEqual({
      model: "tiny-llm",
      prompt: [1, 464, 1110],
      max_tokens: 32,
      temperature: 0.7,
      top_p: 0.9,
      top_k: -1,
      min_p: 0.05,
      seed: 42,
      stop_token_ids: [2, 6],
      ignore_eos: false,
      stream: true,
      stream_options: { include_usage: true },
      return_token_ids: true,
      skip_special_tokens: false,
    });
  });

  it(
    "sends the penalties under vLLM's names when " +
      "set, and leaves them out at their neutral values",
    () => {
      const body = (penalties: Record<string, number>) =>
        completionRequest("tiny-llm", {
          promptIds: [1, 464],
          maxTokens: 8,
          stopTokenIds: [],
          sampling: { temperature: 0, topP: 1, topK: 0, minP: 0, ...penalties },
        });
      expect(
        body({ presencePenalty: 0.5, frequencyPenalty: -1, repetitionPenalty: 1.3 }),
      ).toMatchObject({ presence_penalty: 0.5, frequency_penalty: -1, repetition_penalty: 1.3 });
      expect(
        Object.keys(body({ presencePenalty: 0, frequencyPenalty: 0, repetitionPenalty: 1 })).filter(
          (key) => key.endsWith("_penalty"),
        ),
      ).toEqual([]);
    },
  );

  it(
    "sends logit_bias as vLLM's dict of token-id " +
      "strings when set, and leaves it out when empty",
    () => {
      const body = (logitBias: Array<[number, number]>) =>
        completionRequest("tiny-llm", {
          promptIds: [1, 464],
          maxTokens: 8,
          stopTokenIds: [],
          sampling: { temperature: 0, topP: 1, topK: 0, minP: 0, logitBias },
        });
      expect(
        body([
          [300, 5],
          [7, -100],
        ]),
      ).toMatchObject({ logit_bias: { "300": 5, "7": -100 } });
      expect(body([])).not.toHaveProperty("logit_bias");
    },
  );

  it("sends allowed_token_ids under vLLM's name when set, and leaves it out otherwise", () => {
    const base = {
      promptIds: [1, 464],
      maxTokens: 8,
      stopTokenIds: [],
      sampling: { temperature: 0, topP: 1, topK: 0, minP: 0 },
    };
    expect(
      completionRequest("tiny-llm", {
        ...base,
        sampling: { ...base.sampling, allowedTokenIds: [5, 9] },
      }),
    ).toMatchObject({ allowed_token_ids: [5, 9] });
    expect(completionRequest("tiny-llm", base)).not.toHaveProperty("allowed_token_ids");
  });

  it(
    "sends a structured output as vLLM's structured_outputs " +
      "(StructuredOutputsParams: json, choice or json_object), compact JSON asked for",
    () => {
      const base = {
        promptIds: [1, 464],
        maxTokens: 8,
        stopTokenIds: [],
        sampling: { temperature: 0, topP: 1, topK: 0, minP: 0 },
      };
      const matcher = () => {
        throw new Error("an origin request never builds a matcher");
      };
      const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
      expect(
        completionRequest("tiny-llm", { ...base, structured: { spec: { json: schema }, matcher } }),
      ).toMatchObject({ structured_outputs: { json: schema, disable_any_whitespace: true } });
      expect(
        completionRequest("tiny-llm", {
          ...base,
          structured: { spec: { choice: ["yes", "no"] }, matcher },
        }),
      ).toMatchObject({ structured_outputs: { choice: ["yes", "no"] } });
      expect(
        completionRequest("tiny-llm", {
          ...base,
          structured: { spec: { json_object: true }, matcher },
        }),
      ).toMatchObject({ structured_outputs: { json_object: true } });
      expect(completionRequest("tiny-llm", base)).not.toHaveProperty("structured_outputs");
    },
  );

  it(
    "passes vLLM's ignore_eos and min_tokens " + "(SamplingParams) through when a client sets them",
    () => {
      const body = completionRequest("tiny-llm", {
        promptIds: [1, 464],
        maxTokens: 8,
        stopTokenIds: [6],
        minTokens: 4,
        ignoreEos: true,
        sampling: { temperature: 0, topP: 1, topK: 0, minP: 0 },
      });
      expect(body).toMatchObject({ stop_token_ids: [6], ignore_eos: true, min_tokens: 4 });
    },
  );

  it("reads vLLM's chunks, split anywhere, into ids, finish and stop reasons", async () => {
    for (const cut of [1, 7, 64, 4096]) {
      const chunks = [];
      for await (const data of sseData(streamOf(VLLM_STREAM, cut))) chunks.push(data);
      expect(chunks.at(-1)).toBe("[DONE]");
      const parsed = chunks.slice(0, -1).map((chunk) => CompletionChunk.parse(JSON.parse(chunk)));
      expect(
        parsed.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.token_ids ?? [])),
      ).toEqual([262, 1402, 2]);
      expect(parsed[2]?.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: 2 });
      expect(parsed[3]?.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 3 });
    }
  });

  it("checks chunks by hand exactly as the zod schema does (the per-token path)", () => {
    const chunks: unknown[] = VLLM_STREAM.split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => JSON.parse(frame.slice(6)));
    const choice = {
      index: 0,
      text: " the",
      finish_reason: null,
      stop_reason: null,
      token_ids: [262],
    };
    const variants: unknown[] = [
      ...chunks,
      {},
      [],
      null,
      7,
      "chunk",
      { choices: null },
      { choices: {} },
      { choices: [null] },
      { choices: [[]] },
      { choices: [] },
      { id: 5, choices: [] },
      { object: null, choices: [] },
      { choices: [], prompt_token_ids: null },
      { choices: [], prompt_token_ids: [1, -2] },
      { choices: [], prompt_token_ids: [1.5] },
      { choices: [], prompt_token_ids: "1" },
      { choices: [], usage: null },
      { choices: [], usage: {} },
      { choices: [], usage: [] },
      { choices: [], usage: "3" },
      { choices: [], usage: { prompt_tokens: 3 } },
      { choices: [], usage: { prompt_tokens: 3, completion_tokens: null } },
      { choices: [], usage: { prompt_tokens: 3.5, completion_tokens: 1 } },
      // vLLM with --enable-prompt-tokens-details (serving_completion.py:
      // PromptTokenUsageInfo(cached_tokens=…) when its prefix cache hit).
      {
        choices: [],
        usage: {
          prompt_tokens: 40,
          completion_tokens: 1,
          prompt_tokens_details: { cached_tokens: 32 },
        },
      },
      { choices: [], usage: { prompt_tokens: 40, prompt_tokens_details: { cached_tokens: null } } },
      { choices: [], usage: { prompt_tokens: 40, prompt_tokens_details: {} } },
      { choices: [], usage: { prompt_tokens: 40, prompt_tokens_details: { cached_tokens: -1 } } },
      { choices: [], usage: { prompt_tokens: 40, prompt_tokens_details: { cached_tokens: 1.5 } } },
      { choices: [], usage: { prompt_tokens: 40, prompt_tokens_details: { cached_tokens: "32" } } },
      { choices: [], usage: { prompt_tokens: 40, prompt_tokens_details: 32 } },
    ];
    const choiceVariants: Record<string, unknown>[] = [
      {},
      { index: "0" },
      { index: 0.5 },
      { text: 3 },
      { text: null },
      { token_ids: null },
      { token_ids: undefined },
      { token_ids: [] },
      { token_ids: [-1] },
      { token_ids: [1.5] },
      { token_ids: [2 ** 60] },
      { token_ids: ["1"] },
      { token_ids: 262 },
      { finish_reason: "length" },
      { finish_reason: 1 },
      { stop_reason: 2 },
      { stop_reason: "###" },
      { stop_reason: 2.5 },
      { stop_reason: [] },
    ];
    for (const change of choiceVariants)
      variants.push(
        { choices: [{ ...choice, ...change }] },
        { choices: [choice, { ...choice, ...change }] },
      );
    variants.push({ choices: [{ text: " the" }] });
    for (const variant of variants)
      expect(isCompletionChunk(variant), JSON.stringify(variant)).toBe(
        CompletionChunk.safeParse(variant).success,
      );
    expect(variants.filter((variant) => isCompletionChunk(variant)).length).toBeGreaterThan(10);
    expect(variants.filter((variant) => !isCompletionChunk(variant)).length).toBeGreaterThan(20);
  });

  it(
    "asks for logprobs with the tokens named by id " +
      "(return_tokens_as_token_ids), only when wanted",
    () => {
      const base = {
        promptIds: [1, 464],
        maxTokens: 8,
        stopTokenIds: [],
        sampling: { temperature: 0, topP: 1, topK: 0, minP: 0 },
      };
      expect(completionRequest("tiny-llm", { ...base, logprobs: 3 })).toMatchObject({
        logprobs: 3,
        return_tokens_as_token_ids: true,
      });
      expect(completionRequest("tiny-llm", { ...base, logprobs: 0 })).toMatchObject({
        logprobs: 0,
        return_tokens_as_token_ids: true,
      });
      expect(completionRequest("tiny-llm", base)).not.toHaveProperty("logprobs");
      expect(completionRequest("tiny-llm", base)).not.toHaveProperty("return_tokens_as_token_ids");
    },
  );

  // A chunk as vLLM streams it with logprobs: 2 and return_tokens_as_token_ids
  // (serving_completion.py _create_completion_logprobs: tokens "token_id:N", each dict the sampled
  // token first, then its top logprobs — 2 + 1 entries where the sampled one is not among them —,
  // text_offset from the text before).
  const WITH_LOGPROBS = {
    id: "cmpl-8f1c",
    object: "text_completion",
    created: 1763870000,
    model: "tiny-llm",
    choices: [
      {
        index: 0,
        text: " the house",
        finish_reason: null,
        stop_reason: null,
        token_ids: [262, 1402],
        logprobs: {
          text_offset: [4, 16],
          token_logprobs: [-0.25, -3.5],
          tokens: ["token_id:262", "token_id:1402"],
          top_logprobs: [
            { "token_id:262": -0.25, "token_id:7": -2.0 },
            { "token_id:1402": -3.5, "token_id:9": -0.5, "token_id:33": -1.25 },
          ],
        },
      },
    ],
    usage: null,
  };

  it(
    "reads vLLM's logprobs into ids: the likeliest first, " +
      "the sampled one dropped where it is not among them",
    () => {
      expect(isCompletionChunk(WITH_LOGPROBS)).toBe(true);
      const [choice] = CompletionChunk.parse(WITH_LOGPROBS).choices;
      expect(logprobsOf(choice!.logprobs!, [262, 1402], 2)).toEqual([
        {
          logprob: -0.25,
          top: [
            [262, -0.25],
            [7, -2.0],
          ],
        },
        {
          logprob: -3.5,
          top: [
            [9, -0.5],
            [33, -1.25],
          ],
        },
      ]);
      expect(logprobsOf(choice!.logprobs!, [262, 1402], 0)).toEqual([
        { logprob: -0.25, top: [] },
        { logprob: -3.5, top: [] },
      ]);
      // Misaligned or named by text (an origin without return_tokens_as_token_ids): said, not
      // guessed.
      expect(logprobsOf(choice!.logprobs!, [262], 2)).toMatch(/2 tokens beside 1 token_ids/);
      expect(logprobsOf(choice!.logprobs!, [262, 1403], 2)).toMatch(/not token_id:1403/);
      expect(
        logprobsOf({ ...choice!.logprobs!, tokens: [" the", " house"] }, [262, 1402], 2),
      ).toMatch(/return_tokens_as_token_ids/);
      expect(
        logprobsOf({ ...choice!.logprobs!, top_logprobs: [{ " the": -0.25 }, {}] }, [262, 1402], 2),
      ).toMatch(/not a token id/);
      expect(
        logprobsOf({ ...choice!.logprobs!, token_logprobs: [null, -3.5] }, [262, 1402], 2),
      ).toMatch(/with a logprob/);
    },
  );

  it("checks logprobs by hand exactly as the zod schema does", () => {
    const logprobs = WITH_LOGPROBS.choices[0]!.logprobs;
    const changes: Record<string, unknown>[] = [
      {},
      { tokens: null },
      { tokens: [1] },
      { token_logprobs: [null, -1] },
      { token_logprobs: ["-1"] },
      { token_logprobs: null },
      { top_logprobs: null },
      { top_logprobs: undefined },
      { top_logprobs: [null, {}] },
      { top_logprobs: [[], {}] },
      { top_logprobs: [{ a: "1" }] },
      { top_logprobs: {} },
      { text_offset: null },
      { text_offset: [0.5] },
      { text_offset: [null] },
      { text_offset: "0" },
    ];
    const variants: unknown[] = [
      null,
      undefined,
      3,
      "x",
      [],
      {},
      ...changes.map((change) => ({ ...logprobs, ...change })),
    ];
    for (const variant of variants) {
      const chunk = { choices: [{ ...WITH_LOGPROBS.choices[0], logprobs: variant }] };
      expect(isCompletionChunk(chunk), JSON.stringify(variant)).toBe(
        CompletionChunk.safeParse(chunk).success,
      );
    }
  });

  // vLLM's echo with logprobs: 2 and return_token_ids (serving_completion.py
  // completion_stream_generator: the first chunk's logprobs cover [*prompt_token_ids,
  // *output.token_ids], the prompt's first entry None — null logprob and dict —, its text "" under
  // return_token_ids; token_ids the output's alone).
  const ECHOED = {
    id: "cmpl-8f1c",
    object: "text_completion",
    created: 1763870000,
    model: "tiny-llm",
    choices: [
      {
        index: 0,
        text: "",
        finish_reason: null,
        stop_reason: null,
        token_ids: [262],
        prompt_token_ids: [1, 464, 1110],
        logprobs: {
          text_offset: [0, 10, 22, 35],
          token_logprobs: [null, -4.5, -2.25, -0.25],
          tokens: ["token_id:1", "token_id:464", "token_id:1110", "token_id:262"],
          top_logprobs: [
            null,
            { "token_id:464": -4.5, "token_id:5": -1.0, "token_id:6": -1.5 },
            { "token_id:1110": -2.25, "token_id:8": -0.75 },
            { "token_id:262": -0.25, "token_id:7": -2.0 },
          ],
        },
      },
    ],
    usage: null,
  };

  it(
    "asks for the prompt's logprobs as vLLM's echo, " +
      "one token at least, the larger count for both",
    () => {
      const base = {
        promptIds: [1, 464],
        maxTokens: 0,
        stopTokenIds: [],
        sampling: { temperature: 0, topP: 1, topK: 0, minP: 0 },
      };
      expect(completionRequest("tiny-llm", { ...base, promptLogprobs: 2 })).toMatchObject({
        echo: true,
        logprobs: 2,
        return_tokens_as_token_ids: true,
        max_tokens: 1,
      });
      expect(
        completionRequest("tiny-llm", { ...base, maxTokens: 5, promptLogprobs: 1, logprobs: 4 }),
      ).toMatchObject({ echo: true, logprobs: 4, max_tokens: 5 });
      expect(completionRequest("tiny-llm", { ...base, maxTokens: 5 })).not.toHaveProperty("echo");
    },
  );

  it(
    "reads the echoed prompt's logprobs off the " + "first chunk, and the chunk's own after them",
    () => {
      expect(isCompletionChunk(ECHOED)).toBe(true);
      const [choice] = CompletionChunk.parse(ECHOED).choices;
      const read = echoedLogprobsOf(choice!.logprobs!, [1, 464, 1110], 1);
      if (typeof read === "string") throw new Error(read);
      expect(read.prompt).toEqual([
        null,
        { logprob: -4.5, top: [[5, -1.0]] },
        { logprob: -2.25, top: [[8, -0.75]] },
      ]);
      expect(read.rest.tokens).toEqual(["token_id:262"]);
      expect(echoedLogprobsOf(choice!.logprobs!, [1, 464, 1111], 1)).toMatch(/not token_id:1111/);
      expect(echoedLogprobsOf(choice!.logprobs!, [2, 464, 1110], 1)).toMatch(/first token/);
      expect(echoedLogprobsOf(choice!.logprobs!, [1, 464, 1110, 262, 9], 1)).toMatch(
        /4 tokens beside a prompt of 5/,
      );

      // Through the adapter's step reader: the prompt's logprobs on the first step only, its own
      // token's beside them.
      const chunk = JSON.stringify(ECHOED);
      const prompt = { ids: [1, 464, 1110], count: 1, read: false };
      const first = stepOf([chunk], new Set([2]), 1, prompt);
      expect(first.step).toMatchObject({
        tokenIds: [262],
        logprobs: [{ logprob: -0.25, top: [[262, -0.25]] }],
        promptLogprobs: read.prompt,
      });
      expect(prompt.read).toBe(true);
      const next = JSON.stringify({
        ...WITH_LOGPROBS,
        choices: [
          {
            ...WITH_LOGPROBS.choices[0],
            token_ids: [262],
            logprobs: {
              ...WITH_LOGPROBS.choices[0]!.logprobs,
              text_offset: [0],
              token_logprobs: [-0.25],
              tokens: ["token_id:262"],
              top_logprobs: [{ "token_id:262": -0.25 }],
            },
          },
        ],
      });
      expect(stepOf([next], new Set([2]), 1, prompt).step).not.toHaveProperty("promptLogprobs");
      // An origin that does not echo (no prompt entries) is a 502, not a guess.
      expect(
        stepOf([next], new Set([2]), 1, { ids: [1, 464, 1110], count: 1, read: false }).failure,
      ).toMatchObject({ status: 502 });
    },
  );

  it("recognises vLLM's error events, new and old shapes", () => {
    const newer = ErrorEvent.parse({
      error: { message: "CUDA out of memory", type: "InternalServerError", param: null, code: 500 },
    });
    const older = ErrorEvent.parse({
      object: "error",
      message: "too long",
      type: "BadRequestError",
      param: null,
      code: 400,
    });
    expect(errorMessage(newer)).toBe("CUDA out of memory");
    expect(errorMessage(older)).toBe("too long");
    expect(ErrorEvent.safeParse(JSON.parse(VLLM_STREAM.split("\n\n")[0]!.slice(6))).success).toBe(
      false,
    );
  });
});

describe("sseData", () => {
  it(
    "reads LF, CRLF and CR line ends, multi-line " + "data and comments, split at any byte",
    async () => {
      const events = ['{"a":1}', "first\nsecond", "é ✓ 👩‍👩‍👧", "[DONE]"];
      const frame = (data: string, eol: string) =>
        `: comment${eol}event: message${eol}${data
          .split("\n")
          .map((line) => `data: ${line}`)
          .join(eol)}${eol}${eol}`;
      for (const eol of ["\n", "\r\n", "\r"]) {
        const text =
          `id: 1${eol}${eol}` +
          events.map((data) => frame(data, eol)).join("") +
          "data:no-space" +
          eol +
          eol;
        for (const cut of [1, 2, 3, 5, 4096]) {
          const got: string[] = [];
          for await (const data of sseData(streamOf(text, cut))) got.push(data);
          expect(got, `${JSON.stringify(eol)} cut ${cut}`).toEqual([...events, "no-space"]);
        }
      }
    },
  );

  it("yields an event the stream ends without a blank line after", async () => {
    const got: string[] = [];
    for await (const data of sseData(streamOf('data: {"last":true}\n', 3))) got.push(data);
    expect(got).toEqual(['{"last":true}']);
  });
});

describe("circuit breaker", () => {
  it(
    "opens after the threshold, fails fast with " +
      "Retry-After, lets one probe through after the cooldown",
    () => {
      let now = 0;
      const breaker = circuitBreaker({ threshold: 3, cooldownMs: 5000, now: () => now });
      for (let i = 0; i < 3; i += 1) {
        breaker.check();
        breaker.failure();
      }
      expect(breaker.state()).toBe("open");
      expect(() => breaker.check()).toThrow(
        expect.objectContaining({ status: 503, headers: { "retry-after": "5" } }),
      );
      now = 5000;
      breaker.check(); // the probe
      expect(breaker.state()).toBe("half-open");
      // only one probe at a time
      expect(() => breaker.check()).toThrow(expect.objectContaining({ status: 503 }));
      breaker.failure();
      expect(breaker.state()).toBe("open");
      now = 10_000;
      breaker.check();
      breaker.success();
      expect(breaker.state()).toBe("closed");
      breaker.check();
    },
  );
});
