// Real clients, unmodified, inside workerd with the Worker's own fetch: the official
// `openai` SDK (streaming and not, and its error handling) and the Vercel AI SDK's
// OpenAI-compatible provider (generateText and streamText).
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, stepCountIs, streamText, tool } from "ai";
import { env, SELF } from "cloudflare:test";
import OpenAI from "openai";
import { zodFunction, zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../../src/compose";
import { KEY } from "../../support/workers/helpers";

const origin = inject("llmOrigin");
const fetchViaWorker: typeof fetch = (input, init) => SELF.fetch(input, init);

describe.skipIf(origin === null)("the openai SDK and the AI SDK against the edge", () => {
  Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");
  const client = new OpenAI({
    apiKey: KEY,
    baseURL: "https://edge.test/v1",
    fetch: fetchViaWorker,
    maxRetries: 0,
  });
  const messages = [
    { role: "system", content: "You are a storyteller." },
    { role: "user", content: "Tell me about the sea." },
  ] as const;

  it("openai: chat.completions.create, streamed and not, agree", async () => {
    const whole = await client.chat.completions.create({
      model: "tiny-llm",
      messages: [...messages],
      max_tokens: 24,
      temperature: 0,
    });
    expect(whole.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({
      model: "tiny-llm",
      messages: [...messages],
      max_tokens: 24,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: number | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage.completion_tokens;
    }
    expect(text).toBe(whole.choices[0]?.message.content);
    expect(usage).toBe(whole.usage?.completion_tokens);
  });

  it("openai: completions.create and models.list", async () => {
    const completion = await client.completions.create({
      model: "tiny-llm",
      prompt: "Once upon a time",
      max_tokens: 8,
      temperature: 0,
    });
    expect(completion.choices[0]?.text.length).toBeGreaterThan(0);
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toContain("tiny-llm");
  });

  it(
    "openai: usage.prompt_tokens_details.cached_tokens " +
      "says what the origin's prefix cache served",
    async () => {
      const ask = () =>
        client.chat.completions.create({
          model: "tiny-llm",
          messages: [
            {
              role: "system",
              content:
                "You answer in the voice of a ship's captain, " +
                "short and plain, about the weather at sea.",
            },
            { role: "user", content: "Will it rain?" },
          ],
          max_tokens: 4,
          temperature: 0,
        });
      // The origin keeps a prompt's blocks once its first block was seen: reused from the third
      // request on.
      const first = await ask();
      await ask();
      const third = await ask();
      expect(first.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
      const cached = third.usage?.prompt_tokens_details?.cached_tokens ?? 0;
      expect(cached).toBeGreaterThanOrEqual(16);
      expect(cached % 16).toBe(0);
      expect(cached).toBeLessThan(third.usage?.prompt_tokens ?? 0);
    },
  );

  it(
    "openai: a prompt as token ids (the SDK's " + "number[] form) reads as the text it encodes",
    async () => {
      const text = await client.completions.create({
        model: "tiny-llm",
        prompt: "Once upon a time",
        max_tokens: 8,
        temperature: 0,
      });
      const tokenized = await (
        await fetchViaWorker("https://edge.test/tokenize", {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "tiny-llm", prompt: "Once upon a time" }),
        })
      ).json<{ tokens: number[] }>();
      const ids = await client.completions.create({
        model: "tiny-llm",
        prompt: tokenized.tokens,
        max_tokens: 8,
        temperature: 0,
      });
      expect(ids.choices[0]?.text).toBe(text.choices[0]?.text);
      expect(ids.usage).toEqual(text.usage);
    },
  );

  it(
    "openai: the SDK's newer request fields (openai 7.55 ChatCompletionCreateParamsBase): " +
      "identifiers and cache hints pass, values not honoured are 400s naming them",
    async () => {
      // OpenAI asks apps to send safety_identifier and prompt_cache_key on every request (they
      // replace `user`).
      const params = { model: "tiny-llm", messages: [...messages], max_tokens: 6, temperature: 0 };
      const plain = await client.chat.completions.create(params);
      const hinted = await client.chat.completions.create({
        ...params,
        safety_identifier: "user-3f9a",
        prompt_cache_key: "support-bot-v2",
        prompt_cache_retention: "in_memory",
        verbosity: "medium",
      });
      expect(hinted.choices[0]?.message.content).toBe(plain.choices[0]?.message.content);
      const stream = await client.chat.completions.create({
        ...params,
        stream: true,
        stream_options: { include_usage: true, include_obfuscation: false },
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe(plain.choices[0]?.message.content);
      const refusals: [Record<string, unknown>, string][] = [
        [{ verbosity: "low" }, "verbosity"],
        [{ prompt_cache_retention: "24h" }, "prompt_cache_retention"],
        [{ prompt_cache_options: { mode: "explicit" } }, "prompt_cache_options"],
        [{ moderation: { model: "omni-moderation-latest" } }, "moderation"],
        [
          { stream: true, stream_options: { include_obfuscation: true } },
          "stream_options.include_obfuscation",
        ],
        [{ safety_identifier: "x".repeat(129) }, "safety_identifier"],
      ];
      for (const [extra, param] of refusals) {
        const error = await client.chat.completions
          .create({ ...params, ...extra } as ChatCompletionCreateParamsNonStreaming)
          .catch((caught: unknown) => caught);
        expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error, param).toMatchObject({ status: 400, param });
      }
    },
  );

  it("openai: a refused parameter surfaces as BadRequestError with its param", async () => {
    const error = await client.chat.completions
      .create({ model: "tiny-llm", messages: [...messages], reasoning_effort: "high" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({
      status: 400,
      param: "reasoning_effort",
      code: "invalid_request",
    });
  });

  it(
    "openai: logprobs, chat and completions, streamed (the " +
      "SDK's ChatCompletionStream collects them) and not",
    async () => {
      const params = {
        model: "tiny-llm",
        messages: [...messages],
        max_tokens: 12,
        temperature: 0,
        logprobs: true,
        top_logprobs: 2,
      };
      const whole = await client.chat.completions.create(params);
      const content = whole.choices[0]?.logprobs?.content ?? [];
      expect(content).toHaveLength(whole.usage?.completion_tokens ?? -1);
      expect(content.map((entry) => entry.top_logprobs.length)).toEqual(content.map(() => 2));
      expect(
        content.every(
          (entry) => entry.top_logprobs[0]?.token === entry.token && entry.logprob <= 0,
        ),
      ).toBe(true);
      const streamed = await client.chat.completions.stream(params).finalChatCompletion();
      expect(streamed.choices[0]?.logprobs?.content).toEqual(content);
      const text = await client.completions.create({
        model: "tiny-llm",
        prompt: "Once upon a time",
        max_tokens: 8,
        temperature: 0,
        logprobs: 3,
      });
      const logprobs = text.choices[0]?.logprobs;
      expect(logprobs?.tokens?.join("")).toBe(text.choices[0]?.text);
      expect(
        logprobs?.top_logprobs?.every(
          (dict) => Object.keys(dict).length >= 3 && Object.keys(dict).length <= 4,
        ),
      ).toBe(true);
    },
  );

  it(
    "openai: completions with echo (the SDK's CompletionCreateParams.echo): the " +
      "prompt scored before the completion, and max_tokens 0 for the prompt alone",
    async () => {
      const prompt = "Once upon a time";
      const scored = await client.completions.create({
        model: "tiny-llm",
        prompt,
        max_tokens: 0,
        logprobs: 1,
        echo: true,
      });
      const choice = scored.choices[0];
      expect(choice?.text).toBe(prompt);
      const promptTokens = scored.usage?.prompt_tokens ?? -1;
      expect(choice?.logprobs?.tokens).toHaveLength(promptTokens);
      expect(choice?.logprobs?.token_logprobs?.[0]).toBeNull();
      const next = await client.completions.create({
        model: "tiny-llm",
        prompt,
        max_tokens: 4,
        temperature: 0,
        logprobs: 1,
        echo: true,
      });
      expect(next.choices[0]?.text.startsWith(prompt)).toBe(true);
      expect(next.choices[0]?.logprobs?.tokens).toHaveLength(promptTokens + 4);
      expect(next.choices[0]?.logprobs?.token_logprobs?.slice(0, promptTokens)).toEqual(
        choice?.logprobs?.token_logprobs,
      );
    },
  );

  it(
    "openai: vLLM's return_token_ids sent as the SDK sends extra fields, " +
      "read off its objects as RL code reads them (verl's vLLM rollouts)",
    async () => {
      // The SDK forwards fields it does not know and keeps those it does not know in its answers.
      type WithIds = { prompt_token_ids?: number[]; choices: { token_ids?: number[] }[] };
      const params = {
        model: "tiny-llm",
        messages: [...messages],
        max_tokens: 8,
        temperature: 0,
        return_token_ids: true,
      };
      const whole = (await client.chat.completions.create(
        params as ChatCompletionCreateParamsNonStreaming,
      )) as unknown as WithIds & { usage: { prompt_tokens: number; completion_tokens: number } };
      expect(whole.prompt_token_ids).toHaveLength(whole.usage.prompt_tokens);
      expect(whole.choices[0]?.token_ids).toHaveLength(whole.usage.completion_tokens);
      const stream = await client.chat.completions.create({
        ...params,
        stream: true,
      } as ChatCompletionCreateParamsStreaming);
      const ids: number[] = [];
      let prompt: number[] | undefined;
      for await (const chunk of stream) {
        const withIds = chunk as unknown as WithIds;
        prompt ??= withIds.prompt_token_ids;
        ids.push(...(withIds.choices[0]?.token_ids ?? []));
      }
      expect(prompt).toEqual(whole.prompt_token_ids);
      expect(ids).toEqual(whole.choices[0]?.token_ids);
    },
  );

  it(
    "openai: n choices, streamed (the SDK's ChatCompletionStream assembles " +
      "them by index) and not; choice i is sampled with seed + i, as vLLM's",
    async () => {
      const params = {
        model: "tiny-llm",
        messages: [...messages],
        max_tokens: 16,
        temperature: 1,
        seed: 11,
      };
      const three = await client.chat.completions.create({ ...params, n: 3 });
      expect(three.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
      const texts = three.choices.map((choice) => choice.message.content);
      const singles = await Promise.all(
        [0, 1, 2].map((i) => client.chat.completions.create({ ...params, seed: 11 + i })),
      );
      expect(texts).toEqual(singles.map((single) => single.choices[0]?.message.content));
      expect(new Set(texts).size).toBeGreaterThan(1);
      const completionTokens = singles.reduce(
        (sum, single) => sum + (single.usage?.completion_tokens ?? 0),
        0,
      );
      expect(three.usage).toMatchObject({
        prompt_tokens: singles[0]?.usage?.prompt_tokens,
        completion_tokens: completionTokens,
      });
      const stream = client.chat.completions.stream({
        ...params,
        n: 3,
        stream_options: { include_usage: true },
      });
      const streamed = await stream.finalChatCompletion();
      expect(streamed.choices.map((choice) => choice.message.content)).toEqual(texts);
      expect(streamed.choices.map((choice) => choice.finish_reason)).toEqual(
        three.choices.map((choice) => choice.finish_reason),
      );
      expect(streamed.usage?.completion_tokens).toBe(completionTokens);
    },
  );

  it(
    "penalties: the AI SDK's frequencyPenalty / presencePenalty and the " +
      "openai SDK's fields give the same text, not the unpenalized one",
    async () => {
      const ask = (penalties: { frequency_penalty?: number; presence_penalty?: number }) =>
        client.chat.completions.create({
          model: "tiny-llm",
          messages: [...messages],
          max_tokens: 24,
          temperature: 0,
          ...penalties,
        });
      const penalized = await ask({ frequency_penalty: 1.5, presence_penalty: 0.5 });
      const plain = await ask({});
      const model = createOpenAICompatible({
        name: "edge",
        baseURL: "https://edge.test/v1",
        apiKey: KEY,
        fetch: fetchViaWorker,
      }).chatModel("tiny-llm");
      const viaAiSdk = await generateText({
        model,
        system: messages[0].content,
        prompt: messages[1].content,
        maxOutputTokens: 24,
        temperature: 0,
        frequencyPenalty: 1.5,
        presencePenalty: 0.5,
        maxRetries: 0,
      });
      expect(viaAiSdk.text).toBe(penalized.choices[0]?.message.content);
      expect(penalized.choices[0]?.message.content).not.toBe(plain.choices[0]?.message.content);
    },
  );

  it("openai: logit_bias (the SDK's Record<string, number>) bans and forces tokens", async () => {
    const plain = await client.completions.create({
      model: "tiny-llm",
      prompt: "The old man walked slowly down the",
      max_tokens: 1,
      temperature: 0,
    });
    const forced = await client.completions.create({
      model: "tiny-llm",
      prompt: "The old man walked slowly down the",
      max_tokens: 1,
      temperature: 0,
      logit_bias: { "300": 100 },
    });
    const banned = await client.completions.create({
      model: "tiny-llm",
      prompt: "The old man walked slowly down the",
      max_tokens: 4,
      temperature: 0,
      logit_bias: { "300": -100 },
    });
    expect(forced.choices[0]?.text).not.toBe(plain.choices[0]?.text);
    expect(banned.choices[0]?.text).not.toContain(forced.choices[0]?.text);
  });

  it("AI SDK: generateText and streamText through @ai-sdk/openai-compatible", async () => {
    const provider = createOpenAICompatible({
      name: "edge",
      baseURL: "https://edge.test/v1",
      apiKey: KEY,
      fetch: fetchViaWorker,
      includeUsage: true,
    });
    const model = provider.chatModel("tiny-llm");
    const request = {
      model,
      system: "You are a storyteller.",
      prompt: "Tell me about the sea.",
      maxOutputTokens: 16,
      temperature: 0,
      maxRetries: 0,
    };
    const generated = await generateText(request);
    expect(generated.text.length).toBeGreaterThan(0);
    const streamed = streamText(request);
    let text = "";
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(generated.text);
    expect((await streamed.usage).outputTokens).toBe(generated.usage.outputTokens);
  });

  // Structured outputs as the SDKs build them from a zod schema (openai/helpers/zod, the AI SDK's
  // generateObject with supportsStructuredOutputs): zod 4's JSON Schema, int() bounds and all.
  const Person = z.object({
    name: z.string().max(12),
    age: z.number().int().min(0).max(120),
    color: z.enum(["red", "green", "blue"]),
    nickname: z.string().max(8).nullable(),
  });

  it(
    "openai: chat.completions.parse (zodResponseFormat) and " +
      "responses.parse (zodTextFormat) read back what the edge writes",
    async () => {
      const completion = await client.chat.completions.parse({
        model: "tiny-llm",
        messages: [{ role: "user", content: "Describe a person." }],
        response_format: zodResponseFormat(Person, "person"),
        max_tokens: 120,
        temperature: 0,
      });
      const [choice] = completion.choices;
      expect(choice?.finish_reason).toBe("stop");
      expect(Person.parse(choice?.message.parsed)).toEqual(choice?.message.parsed);
      const response = await client.responses.parse({
        model: "tiny-llm",
        input: "Describe a person.",
        text: { format: zodTextFormat(Person, "person") },
        max_output_tokens: 120,
        temperature: 0,
      });
      expect(response.output_parsed).toEqual(choice?.message.parsed);
    },
  );

  it(
    "AI SDK: generateObject with a zod schema through " +
      "@ai-sdk/openai-compatible (json_schema response_format)",
    async () => {
      const provider = createOpenAICompatible({
        name: "edge",
        baseURL: "https://edge.test/v1",
        apiKey: KEY,
        fetch: fetchViaWorker,
        supportsStructuredOutputs: true,
      });
      const { object } = await generateObject({
        model: provider.chatModel("tiny-llm"),
        schema: Person,
        prompt: "Describe a person.",
        maxOutputTokens: 120,
        temperature: 0,
        maxRetries: 0,
      });
      expect(Person.parse(object)).toEqual(object);
    },
  );

  // Function calling as the SDKs build it: the openai SDK's tools and tool_choice (and zodFunction
  // with chat.completions.parse, which parses each call's arguments), the AI SDK's tool() with
  // toolChoice and a second step that sends the call and its result back.
  const Weather = z.object({ city: z.string().max(12), unit: z.enum(["celsius", "fahrenheit"]) });

  it(
    "openai: a forced tool call, streamed (ChatCompletionStream) " +
      "and not, and chat.completions.parse with zodFunction",
    async () => {
      const params = {
        model: "tiny-llm",
        messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
        tools: [zodFunction({ name: "get_weather", parameters: Weather })],
        tool_choice: { type: "function" as const, function: { name: "get_weather" } },
        temperature: 0,
      };
      const whole = await client.chat.completions.create(params);
      const [call] = whole.choices[0]?.message.tool_calls ?? [];
      expect(call?.type).toBe("function");
      if (call?.type !== "function") throw new Error("no function call");
      expect(call.function.name).toBe("get_weather");
      expect(Weather.parse(JSON.parse(call.function.arguments))).toEqual(
        JSON.parse(call.function.arguments),
      );
      const streamed = await client.chat.completions.stream(params).finalChatCompletion();
      const [again] = streamed.choices[0]?.message.tool_calls ?? [];
      expect(again?.type === "function" ? again.function.arguments : undefined).toBe(
        call.function.arguments,
      );
      const parsed = await client.chat.completions.parse(params);
      const [parsedCall] = parsed.choices[0]?.message.tool_calls ?? [];
      expect(
        parsedCall?.type === "function" ? parsedCall.function.parsed_arguments : undefined,
      ).toEqual(JSON.parse(call.function.arguments));
    },
  );

  // tool_choice "auto" (both SDKs' default with tools): the tiny model never writes a <tool_call>
  // by itself, so vLLM's structured_outputs choice (a body field both SDKs pass through) makes it.
  const AUTO_CALLS =
    'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": ' +
    '"Paris", "unit": "celsius"}}\n</tool_call>\n<tool_call>{"name": ' +
    '"get_weather", "arguments": {"city": "Rome", "unit": "celsius"}}</tool_call>';

  it(
    'openai: tool_choice "auto": the text before the calls and two ' +
      "calls, streamed (ChatCompletionStream's accumulator) and not",
    async () => {
      const params = {
        model: "tiny-llm",
        messages: [{ role: "user" as const, content: "What is the weather in Paris and Rome?" }],
        tools: [zodFunction({ name: "get_weather", parameters: Weather })],
        temperature: 0,
        structured_outputs: { choice: [AUTO_CALLS] },
      };
      const whole = await client.chat.completions.create(params);
      const message = whole.choices[0]!.message;
      expect(whole.choices[0]!.finish_reason).toBe("tool_calls");
      expect(message.content).toBe("Checking.\n");
      const calls = (message.tool_calls ?? []).map((call) =>
        call.type === "function" ? [call.function.name, call.function.arguments] : [],
      );
      expect(calls).toEqual([
        ["get_weather", '{"city": "Paris", "unit": "celsius"}'],
        ["get_weather", '{"city": "Rome", "unit": "celsius"}'],
      ]);
      const streamed = await client.chat.completions.stream(params).finalChatCompletion();
      expect(streamed.choices[0]!.message.content).toBe("Checking.\n");
      expect(streamed.choices[0]!.finish_reason).toBe("tool_calls");
      expect(
        (streamed.choices[0]!.message.tool_calls ?? []).map((call) =>
          call.type === "function" ? [call.function.name, call.function.arguments] : [],
        ),
      ).toEqual(calls);
      // Without the choice the tiny model answers in text: no calls.
      const { structured_outputs: _, ...plain } = params;
      const text = await client.chat.completions.create({ ...plain, max_tokens: 8 });
      expect(text.choices[0]!.message.tool_calls).toBeUndefined();
      expect(typeof text.choices[0]!.message.content).toBe("string");
    },
  );

  it(
    'AI SDK: toolChoice "auto" (its default) ' + "streams the text and the calls, each executed",
    async () => {
      const provider = createOpenAICompatible({
        name: "edge",
        baseURL: "https://edge.test/v1",
        apiKey: KEY,
        fetch: fetchViaWorker,
      });
      const seen: unknown[] = [];
      const weather = tool({
        description: "The weather in a city",
        inputSchema: Weather,
        execute: async (input) => (seen.push(input), { forecast: "sunny" }),
      });
      const streamed = streamText({
        model: provider.chatModel("tiny-llm"),
        tools: { get_weather: weather },
        prompt: "What is the weather in Paris and Rome?",
        temperature: 0,
        maxRetries: 0,
        providerOptions: { edge: { structured_outputs: { choice: [AUTO_CALLS] } } },
      });
      expect(await streamed.text).toBe("Checking.\n");
      expect(await streamed.finishReason).toBe("tool-calls");
      expect((await streamed.toolCalls).map((call) => [call.toolName, call.input])).toEqual([
        ["get_weather", { city: "Paris", unit: "celsius" }],
        ["get_weather", { city: "Rome", unit: "celsius" }],
      ]);
      expect(seen).toEqual([
        { city: "Paris", unit: "celsius" },
        { city: "Rome", unit: "celsius" },
      ]);
    },
  );

  it(
    "AI SDK: tools with toolChoice required, executed, and " +
      "a second step that sends the call and its result back",
    async () => {
      const provider = createOpenAICompatible({
        name: "edge",
        baseURL: "https://edge.test/v1",
        apiKey: KEY,
        fetch: fetchViaWorker,
      });
      const seen: unknown[] = [];
      const weather = tool({
        description: "The weather in a city",
        inputSchema: Weather,
        execute: async (input) => {
          seen.push(input);
          return { forecast: "sunny" };
        },
      });
      const result = await generateText({
        model: provider.chatModel("tiny-llm"),
        tools: { weather },
        toolChoice: "required",
        prompt: "What is the weather in Paris?",
        temperature: 0,
        maxOutputTokens: 60,
        maxRetries: 0,
        // Passed through as a body field by the provider: one call (the tiny model would call until
        // its context is full).
        providerOptions: { edge: { parallel_tool_calls: false } },
        stopWhen: stepCountIs(2),
        // The second step answers in text: the call and its result go back as an assistant message
        // with tool_calls and a tool message.
        prepareStep: ({ stepNumber }) =>
          stepNumber === 1 ? { toolChoice: "none" as const } : undefined,
      });
      expect(result.steps).toHaveLength(2);
      const [first, second] = result.steps;
      expect(first?.finishReason).toBe("tool-calls");
      expect(first?.toolCalls.map((call) => call.toolName)).toEqual(
        first?.toolCalls.map(() => "weather"),
      );
      expect(seen.length).toBeGreaterThan(0);
      for (const input of seen) expect(Weather.parse(input)).toEqual(input);
      expect(second?.text.length).toBeGreaterThan(0);

      const streamed = streamText({
        model: provider.chatModel("tiny-llm"),
        tools: { weather: tool({ inputSchema: Weather }) },
        toolChoice: { type: "tool", toolName: "weather" },
        prompt: "What is the weather in Paris?",
        temperature: 0,
        maxRetries: 0,
      });
      const calls = await streamed.toolCalls;
      expect(calls).toHaveLength(1);
      expect(Weather.parse(calls[0]?.input)).toEqual(calls[0]?.input);
    },
  );
});
