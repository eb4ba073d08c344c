// OpenAI's Responses API through the edge, read by the official `openai` SDK unmodified
// (openai-node src/resources/responses/responses.ts: `responses.create`, its `output_text`,
// `responses.stream` and its finalResponse, the typed stream events) inside workerd with the
// Worker's own fetch. The text is the chat route's for the same messages: one generation path.
import { env, SELF } from "cloudflare:test";
import OpenAI from "openai";
import { zodResponsesFunction } from "openai/helpers/zod";
import { z } from "zod";
import { describe, expect, inject, it } from "vitest";
import { perModelKey } from "../../../src/compose";
import { appOnOrigin, call } from "../../support/workers/generation";
import { KEY, problem } from "../../support/workers/helpers";
import { Conformance, type OpenApiDocument } from "../../support/workers/openapi-conformance";

const origin = inject("llmOrigin");
const fetchViaWorker: typeof fetch = (input, init) => SELF.fetch(input, init);

async function post(body: unknown): Promise<Response> {
  return await SELF.fetch("https://edge.test/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe.skipIf(origin === null)("POST /v1/responses", () => {
  Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");
  const client = new OpenAI({
    apiKey: KEY,
    baseURL: "https://edge.test/v1",
    fetch: fetchViaWorker,
    maxRetries: 0,
  });
  const instructions = "You are a storyteller.";
  const input = "Tell me about the sea.";

  it(
    "openai: responses.create gives the chat route's text " +
      "for the same messages, in OpenAI's Response shape",
    async () => {
      const response = await client.responses.create({
        model: "tiny-llm",
        instructions,
        input,
        max_output_tokens: 24,
        temperature: 0,
      });
      const chat = await client.chat.completions.create({
        model: "tiny-llm",
        messages: [
          { role: "system", content: instructions },
          { role: "user", content: input },
        ],
        max_tokens: 24,
        temperature: 0,
      });
      expect(response.output_text).toBe(chat.choices[0]?.message.content);
      expect(response).toMatchObject({
        object: "response",
        model: "tiny-llm",
        instructions,
        max_output_tokens: 24,
        tools: [],
        error: null,
      });
      expect(response.id).toMatch(/^resp_/);
      expect(response.output).toHaveLength(1);
      expect(response.output[0]).toMatchObject({
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", annotations: [] }],
      });
      expect(response.usage).toMatchObject({
        input_tokens: chat.usage?.prompt_tokens,
        output_tokens: chat.usage?.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
      });
      // Its finish as OpenAI says it: the length ran out, or the model stopped.
      if (chat.choices[0]?.finish_reason === "length")
        expect(response).toMatchObject({
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
        });
      else expect(response).toMatchObject({ status: "completed", incomplete_details: null });
    },
  );

  it(
    "openai: a list of messages with input_text parts, and " +
      "an assistant turn, read as the chat route reads them",
    async () => {
      const messages = [
        { role: "developer" as const, content: instructions },
        { role: "user" as const, content: [{ type: "input_text" as const, text: "Hello" }] },
        { role: "assistant" as const, content: "Hi, once" },
        { role: "user" as const, content: input },
      ];
      const response = await client.responses.create({
        model: "tiny-llm",
        input: messages,
        max_output_tokens: 12,
        temperature: 0,
      });
      const chat = await client.chat.completions.create({
        model: "tiny-llm",
        messages: [
          { role: "system", content: instructions },
          { role: "user", content: "Hello" },
          { role: "assistant", content: "Hi, once" },
          { role: "user", content: input },
        ],
        max_tokens: 12,
        temperature: 0,
      });
      expect(response.output_text).toBe(chat.choices[0]?.message.content);
    },
  );

  it(
    "openai: streamed, the SDK's events in OpenAI's " +
      "order, numbered; the deltas joined are the final text",
    async () => {
      const params = {
        model: "tiny-llm",
        instructions,
        input,
        max_output_tokens: 16,
        temperature: 0,
      };
      const whole = await client.responses.create(params);
      const stream = client.responses.stream(params);
      const types: string[] = [];
      const sequence: number[] = [];
      let deltas = "";
      for await (const event of stream) {
        types.push(event.type);
        sequence.push(event.sequence_number);
        if (event.type === "response.output_text.delta") deltas += event.delta;
      }
      const final = await stream.finalResponse();
      expect(deltas).toBe(whole.output_text);
      expect(final.output_text).toBe(whole.output_text);
      expect(sequence).toEqual(sequence.map((_, i) => i));
      const ending = whole.status === "incomplete" ? "response.incomplete" : "response.completed";
      expect(types.filter((type) => type !== "response.output_text.delta")).toEqual([
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        ending,
      ]);
    },
  );

  it(
    "openai: include message.output_text.logprobs with top_logprobs: the " +
      "chat route's logprobs, on the text part and spread over the deltas",
    async () => {
      const params = {
        model: "tiny-llm",
        input,
        max_output_tokens: 10,
        temperature: 0,
        include: ["message.output_text.logprobs" as const],
        top_logprobs: 2,
      };
      const response = await client.responses.create(params);
      const chat = await client.chat.completions.create({
        model: "tiny-llm",
        messages: [{ role: "user", content: input }],
        max_tokens: 10,
        temperature: 0,
        logprobs: true,
        top_logprobs: 2,
      });
      const part =
        response.output[0]?.type === "message" ? response.output[0].content[0] : undefined;
      const logprobs = part?.type === "output_text" ? part.logprobs : undefined;
      // The same tokens, alternatives and numbers (to float noise: the second request reads the
      // origin's prefix cache).
      type Entry = {
        token: string;
        logprob: number;
        top_logprobs: ReadonlyArray<{ token: string }>;
      };
      const close = (
        actual: readonly Entry[] | undefined,
        expected: readonly Entry[] | undefined,
      ) => {
        expect(
          actual?.map((entry) => [entry.token, entry.top_logprobs.map((top) => top.token)]),
        ).toEqual(
          expected?.map((entry) => [entry.token, entry.top_logprobs.map((top) => top.token)]),
        );
        actual?.forEach((entry, i) => expect(entry.logprob).toBeCloseTo(expected![i]!.logprob, 4));
      };
      close(logprobs, chat.choices[0]?.logprobs?.content ?? undefined);
      expect(logprobs).toHaveLength(response.usage?.output_tokens ?? -1);
      // Streamed: every token's entry once, on the delta that carries its text or on
      // output_text.done.
      const streamed: unknown[] = [];
      for await (const event of client.responses.stream(params)) {
        if (
          event.type === "response.output_text.delta" ||
          event.type === "response.output_text.done"
        )
          streamed.push(...event.logprobs);
      }
      close(streamed as Entry[], logprobs);
      // Not asked: none; other includes and out-of-range counts are 400s naming them.
      const plain = await client.responses.create({
        model: "tiny-llm",
        input,
        max_output_tokens: 4,
        temperature: 0,
      });
      expect(
        plain.output[0]?.type === "message" && plain.output[0].content[0]?.type === "output_text"
          ? plain.output[0].content[0].logprobs
          : undefined,
      ).toEqual([]);
      expect(
        await problem(
          await post({ model: "tiny-llm", input, include: ["reasoning.encrypted_content"] }),
        ),
      ).toMatchObject({ status: 400, field: "include.0" });
      expect(
        await problem(await post({ model: "tiny-llm", input, top_logprobs: 21 })),
      ).toMatchObject({ status: 400, field: "top_logprobs" });
    },
  );

  it(
    "the answer, each event's response and item match " +
      "the documented Response schema (openapi.json)",
    async () => {
      const conformance = new Conformance(
        await (await SELF.fetch("https://edge.test/openapi.json")).json<OpenApiDocument>(),
      );
      for (const max of [2, 64]) {
        const { body } = await conformance.check(
          "POST",
          "https://edge.test/v1/responses",
          await post({ model: "tiny-llm", input, max_output_tokens: max, metadata: { k: "v" } }),
          `max_output_tokens ${max}`,
        );
        expect((body as { status: string }).status).toMatch(/^(completed|incomplete)$/);
      }
      const streamed = await post({ model: "tiny-llm", input, max_output_tokens: 3, stream: true });
      await conformance.check(
        "POST",
        "https://edge.test/v1/responses",
        streamed.clone(),
        "streamed",
      );
      const events = (await streamed.text())
        .split("\n\n")
        .filter((frame) => frame.startsWith("event: "))
        .map(
          (frame) =>
            JSON.parse(frame.split("\n")[1]!.slice(6)) as { type: string; response?: unknown },
        );
      const ending = events.at(-1)!;
      const asJson = new Response(JSON.stringify(ending.response), {
        headers: { "content-type": "application/json" },
      });
      await conformance.check(
        "POST",
        "https://edge.test/v1/responses",
        asJson,
        "the stream's final response",
      );
    },
  );

  // OpenAI's Responses stream ends with its lifecycle event, no `data: [DONE]` sentinel (that is
  // chat's): openai-openapi's ResponseStreamEvent lists no such event, and openai-node
  // src/core/streaming.ts merely skips one. A strict reader takes every frame as an
  // `event:`/`data:` pair of JSON.
  const strictFrames = async (response: Response) =>
    (await response.text())
      .split("\n\n")
      .filter((frame) => frame !== "")
      .map((frame) => {
        const [event, data, ...rest] = frame.split("\n");
        expect(rest).toEqual([]);
        expect(event).toMatch(/^event: (response\.[a-z_.]+|error)$/);
        expect(data).toMatch(/^data: \{/);
        const parsed = JSON.parse(data!.slice("data: ".length)) as {
          type: string;
          sequence_number: number;
          response?: { id: string; status: string; error: unknown; output: unknown[] };
        };
        expect(parsed.type).toBe(event!.slice("event: ".length));
        return parsed;
      });

  it(
    "the SSE frames name their events as OpenAI's do, " +
      "numbered, and end with response.completed (no [DONE])",
    async () => {
      const response = await post({ model: "tiny-llm", input, max_output_tokens: 4, stream: true });
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const events = await strictFrames(response);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
      expect(["response.completed", "response.incomplete"]).toContain(events.at(-1)?.type);
    },
  );

  // An origin failing after the headers (the stub's /fail-after-3 sends three tokens, then the
  // error, as test/workers/openai/chat-completions.test.ts uses it): the stream ends with
  // response.failed, openai-node's ResponseFailedEvent (src/resources/responses/responses.ts) — the
  // same Response, status "failed", error {code, message} (ResponseError) — and no [DONE].
  describe("an origin failing mid-stream", () => {
    const failing = appOnOrigin(`${origin?.faultyUrl ?? ""}/fail-after-3`);
    const cases: [string, Record<string, unknown>][] = [
      ["text", {}],
      [
        "a forced function call",
        {
          tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
          tool_choice: "required",
        },
      ],
    ];
    for (const [name, extra] of cases) {
      it(
        `${name}: ends with response.failed (the ` +
          'Response, status "failed", its error), no [DONE]',
        async () => {
          const response = await call(failing, "/v1/responses", {
            model: "tiny-llm",
            input,
            max_output_tokens: 24,
            stream: true,
            ...extra,
          });
          expect(response.status).toBe(200);
          const events = await strictFrames(response);
          expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
          const last = events.at(-1);
          expect(last?.type).toBe("response.failed");
          expect(events.filter((event) => event.type === "response.failed")).toHaveLength(1);
          expect(last?.response).toMatchObject({
            id: events[0]?.response?.id,
            status: "failed",
            error: {
              code: "server_error",
              message: expect.stringMatching(/illegal memory access/),
            },
          });
        },
      );
    }

    it(
      "openai: responses.stream() ends cleanly; " + "finalResponse() is the failed Response",
      async () => {
        const failingClient = new OpenAI({
          apiKey: KEY,
          baseURL: "https://edge.test/v1",
          fetch: (request, init) => Promise.resolve(failing.request(request, init, env)),
          maxRetries: 0,
        });
        const stream = failingClient.responses.stream({ model: "tiny-llm", input, temperature: 0 });
        const types: string[] = [];
        for await (const event of stream) types.push(event.type);
        const final = await stream.finalResponse();
        expect(types.at(-1)).toBe("response.failed");
        expect(final.status).toBe("failed");
        expect(final.error).toMatchObject({ code: "server_error" });
        expect(final.output_text.length).toBeGreaterThan(0);
      },
    );
  });

  it(
    "fields it cannot honour are 400s naming them; " +
      "neutral values pass; unknown fields are refused",
    async () => {
      for (const [extra, field] of [
        [{ previous_response_id: "resp_1" }, "previous_response_id"],
        [
          {
            tools: [{ type: "function", name: "f" }],
            tool_choice: { type: "function", name: "g" },
          },
          "tool_choice.name",
        ],
        [
          {
            tools: [
              {
                type: "function",
                name: "f",
                parameters: {
                  type: "object",
                  properties: { a: { type: "string", format: "date" } },
                },
              },
            ],
            tool_choice: "required",
          },
          "tools.0.parameters.properties.a.format",
        ],
        [
          {
            tools: [{ type: "function", name: "f" }],
            tool_choice: "required",
            text: { format: { type: "json_object" } },
          },
          "tool_choice",
        ],
        [
          { input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{oops" }] },
          "input.0.arguments",
        ],
        [{ reasoning: { effort: "high" } }, "reasoning"],
        [{ store: true }, "store"],
        [
          {
            text: {
              format: {
                type: "json_schema",
                name: "p",
                schema: { type: "string", pattern: "(?=x)" },
              },
            },
          },
          "text.format.schema.pattern",
        ],
        [{ frobnicate: 1 }, "frobnicate"],
        [{ input: [] }, "input"],
        [{ input: [{ role: "wizard", content: "hi" }] }, "input.0.role"],
        [{ max_output_tokens: 0 }, "max_output_tokens"],
      ] as const) {
        const response = await post({ model: "tiny-llm", input, ...extra });
        expect(response.status, JSON.stringify(extra)).toBe(400);
        expect(await problem(response)).toMatchObject({ field, error: { param: field } });
      }
      const neutral = await post({
        model: "tiny-llm",
        input,
        max_output_tokens: 2,
        store: false,
        tools: [],
        tool_choice: "auto",
        truncation: "disabled",
        text: { format: { type: "text" } },
        metadata: { run: "a" },
        user: "u",
      });
      expect(neutral.status).toBe(200);
      expect(await neutral.json()).toMatchObject({
        metadata: { run: "a" },
        user: "u",
        store: false,
      });
      expect((await post({ model: "gpt-17", input })).status).toBe(404);
      const tooLong = await post({ model: "tiny-llm", input: "word ".repeat(5000) });
      expect(tooLong.status).toBe(400);
      expect(await problem(tooLong)).toMatchObject({ code: "context_length_exceeded" });
    },
  );

  // Function tools (openai-node FunctionTool, ResponseFunctionToolCall and the
  // response.function_call_arguments.* events): a forced call is function_call output items.
  const Weather = z.object({ city: z.string().max(12), unit: z.enum(["celsius", "fahrenheit"]) });
  const weatherTool = zodResponsesFunction({ name: "get_weather", parameters: Weather });

  it(
    "openai: a forced function call as function_call items, streamed " +
      "(responses.stream) and not, and responses.parse's parsed_arguments",
    async () => {
      const params = {
        model: "tiny-llm",
        input: "What is the weather in Paris?",
        tools: [weatherTool],
        tool_choice: { type: "function" as const, name: "get_weather" },
        temperature: 0,
      };
      const response = await client.responses.create(params);
      expect(response.status).toBe("completed");
      expect(response.output).toHaveLength(1);
      const [item] = response.output;
      if (item?.type !== "function_call")
        throw new Error(`expected a function_call item, got ${JSON.stringify(item)}`);
      expect(item).toMatchObject({ name: "get_weather", status: "completed" });
      expect(item.call_id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(item.id).toMatch(/^fc_[0-9a-f]{32}$/);
      expect(Weather.parse(JSON.parse(item.arguments))).toEqual(JSON.parse(item.arguments));
      expect(response.tools).toMatchObject([{ type: "function", name: "get_weather" }]);
      expect(response.tool_choice).toEqual({ type: "function", name: "get_weather" });

      const stream = client.responses.stream(params);
      const types: string[] = [];
      let deltas = "";
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.function_call_arguments.delta") deltas += event.delta;
      }
      const final = await stream.finalResponse();
      const [streamedItem] = final.output;
      expect(streamedItem?.type === "function_call" ? streamedItem.arguments : undefined).toBe(
        item.arguments,
      );
      expect(deltas).toBe(item.arguments);
      expect(types.filter((type) => !type.endsWith(".delta"))).toEqual([
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
      ]);

      const parsed = await client.responses.parse(params);
      const [parsedItem] = parsed.output;
      expect(
        parsedItem?.type === "function_call" ? parsedItem.parsed_arguments : undefined,
      ).toEqual(JSON.parse(item.arguments));
    },
  );

  it(
    'openai: tools with "auto" (the default): the tiny model ' +
      "answers in text, one message item, streamed and not",
    async () => {
      const params = {
        model: "tiny-llm",
        input: "What is the weather in Paris?",
        tools: [weatherTool],
        temperature: 0,
        max_output_tokens: 12,
      };
      const response = await client.responses.create(params);
      expect(response.tool_choice).toBe("auto");
      expect(response.output.map((item) => item.type)).toEqual(["message"]);
      expect(response.output_text.length).toBeGreaterThan(0);
      const stream = client.responses.stream(params);
      for await (const event of stream) expect(event.type).not.toMatch(/function_call/);
      expect((await stream.finalResponse()).output_text).toBe(response.output_text);
    },
  );

  it(
    '"required": calls of the listed tools; a second turn ' +
      "sends the call and its output back as input items",
    async () => {
      // Small schemas: the tools, the call and its output all go into the tiny model's 512-token
      // context.
      const cityTool = {
        type: "function" as const,
        name: "weather",
        parameters: {
          type: "object",
          properties: { city: { type: "string", maxLength: 8 } },
          required: ["city"],
        },
        strict: true,
      };
      const timeTool = {
        type: "function" as const,
        name: "time",
        parameters: {
          type: "object",
          properties: { zone: { type: "string", maxLength: 8 } },
          required: ["zone"],
        },
        strict: true,
      };
      const tools = [cityTool, timeTool];
      const first = await client.responses.create({
        model: "tiny-llm",
        input: "What is the weather in Paris?",
        tools,
        tool_choice: "required",
        parallel_tool_calls: false,
        temperature: 0,
      });
      expect(first.output).toHaveLength(1);
      const [call] = first.output;
      if (call?.type !== "function_call") throw new Error("expected a function_call item");
      expect(["weather", "time"]).toContain(call.name);
      const second = await client.responses.create({
        model: "tiny-llm",
        input: [
          { role: "user", content: "What is the weather in Paris?" },
          call,
          { type: "function_call_output", call_id: call.call_id, output: "sunny" },
        ],
        tools,
        tool_choice: "none",
        max_output_tokens: 8,
        temperature: 0,
      });
      expect(second.output[0]?.type).toBe("message");
      expect(second.output_text.length).toBeGreaterThan(0);
      // The same conversation through chat, written as chat messages: the same prompt, so the same
      // text.
      const chat = await client.chat.completions.create({
        model: "tiny-llm",
        messages: [
          { role: "user", content: "What is the weather in Paris?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: call.call_id,
                type: "function",
                function: { name: call.name, arguments: call.arguments },
              },
            ],
          },
          { role: "tool", tool_call_id: call.call_id, content: "sunny" },
        ],
        tools: tools.map(({ type, name, parameters, strict }) => ({
          type,
          function: { name, parameters, strict },
        })),
        tool_choice: "none",
        max_tokens: 8,
        temperature: 0,
      });
      expect(second.output_text).toBe(chat.choices[0]?.message.content);
    },
  );

  it(
    "a forced call's answer and events match the " + "documented Response schema (openapi.json)",
    async () => {
      const conformance = new Conformance(
        await (await SELF.fetch("https://edge.test/openapi.json")).json<OpenApiDocument>(),
      );
      const body = {
        model: "tiny-llm",
        input: "What is the weather in Paris?",
        tools: [{ type: "function", name: "get_weather", parameters: Weather.toJSONSchema() }],
        tool_choice: "required",
      };
      await conformance.check(
        "POST",
        "https://edge.test/v1/responses",
        await post(body),
        "function_call items",
      );
      const streamed = await post({ ...body, stream: true, max_output_tokens: 20 });
      await conformance.check(
        "POST",
        "https://edge.test/v1/responses",
        streamed.clone(),
        "streamed function calls",
      );
      const events = (await streamed.text())
        .split("\n\n")
        .filter((frame) => frame.startsWith("event: "))
        .map(
          (frame) =>
            JSON.parse(frame.split("\n")[1]!.slice(6)) as {
              type: string;
              response?: { status: string };
            },
        );
      expect(events.at(-1)?.type).toBe("response.incomplete");
      await conformance.check(
        "POST",
        "https://edge.test/v1/responses",
        new Response(JSON.stringify(events.at(-1)!.response), {
          headers: { "content-type": "application/json" },
        }),
        "the stream's final response",
      );
    },
  );
});
