// Function calling through the edge, in both places, as vLLM serves it
// (vllm-project/vllm: vllm/entrypoints/openai/chat_completion/protocol.py,
// ChatCompletionRequest.check_tool_usage and _get_json_schema_from_tool; serving_chat.py, the
// named, "required" and auto branches): a named tool_choice constrains the output to the
// function's parameters, "required" to the list [{"name", "parameters"}, …]; "auto" reads the
// model's own <tool_call> blocks with the manifest's parser (vLLM's hermes; a model without a
// parser refuses it). OpenAI's response shapes: message.content null (forced) or the text before
// the calls (auto), tool_calls [{id, type, function: {name, arguments}}], finish_reason
// "tool_calls" ("required", auto) or "stop" (named); streamed as tool_calls deltas, the first of
// a call with its id and name.
import { describe, expect, inject, it } from "vitest";
import { env } from "cloudflare:test";
import { KEY, problem } from "../../support/workers/helpers";
import {
  appOnOrigin,
  bothPlaces,
  call,
  sseEvents,
  type App,
} from "../../support/workers/generation";
import type { ToolCallParser } from "../../../src/models/manifest";

const origin = inject("llmOrigin");

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}
interface ChatResponse {
  choices: {
    message: { content: string | null; tool_calls?: ToolCall[] };
    finish_reason: string;
  }[];
  prompt_token_ids?: number[];
}
interface ToolDelta {
  index: number;
  id?: string;
  type?: string;
  function: { name?: string; arguments: string };
}
interface Chunk {
  choices: {
    index: number;
    delta: { role?: string; content?: string | null; tool_calls?: ToolDelta[] };
    finish_reason: string | null;
  }[];
}

const WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", maxLength: 16 },
        unit: { enum: ["celsius", "fahrenheit"] },
      },
      required: ["city", "unit"],
    },
  },
};
const TIME = {
  type: "function",
  function: {
    name: "get_time",
    parameters: {
      type: "object",
      properties: { zone: { type: "string", maxLength: 8 } },
      required: ["zone"],
    },
  },
};

/** get_weather's arguments, checked by hand: compact JSON in declared order. */
function expectWeather(args: string): void {
  const value = JSON.parse(args) as { city: unknown; unit: unknown };
  expect(typeof value.city === "string" && [...value.city].length <= 16, args).toBe(true);
  expect(["celsius", "fahrenheit"]).toContain(value.unit);
  expect(args).toBe(JSON.stringify({ city: value.city, unit: value.unit }));
}
function expectTime(args: string): void {
  const value = JSON.parse(args) as { zone: unknown };
  expect(typeof value.zone === "string" && [...value.zone].length <= 8, args).toBe(true);
  expect(args).toBe(JSON.stringify({ zone: value.zone }));
}

// No max_tokens: the tools take most of the tiny model's 512-token context, and the rest is the
// default.
const ask = (body: Record<string, unknown>) => ({
  model: "tiny-llm",
  messages: [{ role: "user", content: "What is the weather in Paris?" }],
  ...body,
});

async function chat(app: App, body: Record<string, unknown>): Promise<ChatResponse> {
  const response = await call(app, "/v1/chat/completions", ask(body));
  expect(response.status, await response.clone().text()).toBe(200);
  return await response.json<ChatResponse>();
}

/** A streamed answer's chunks, and each call's id, name and arguments joined from the deltas. */
async function streamed(
  app: App,
  body: Record<string, unknown>,
): Promise<{ chunks: Chunk[]; calls: { id?: string; name?: string; arguments: string }[] }> {
  const response = await call(app, "/v1/chat/completions", ask({ ...body, stream: true }));
  expect(response.status).toBe(200);
  const events = await sseEvents(response);
  expect(events.at(-1)).toBe("[DONE]");
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as Chunk);
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      if (delta.id !== undefined) {
        expect(calls.length, "a call's first delta carries its id").toBe(delta.index);
        expect(delta.type).toBe("function");
        calls.push({ id: delta.id, name: delta.function.name, arguments: "" });
      }
      calls[delta.index]!.arguments += delta.function.arguments;
    }
  }
  return { chunks, calls };
}

describe.skipIf(origin === null)("tool calls, on the origin and in the isolate", () => {
  const places = bothPlaces(origin);
  const greedy = new Map<string, string[]>();

  for (const [place, appOf] of places) {
    describe(place, () => {
      it("a named tool_choice: the function's arguments, " +
        "finish_reason stop; the stream's deltas join to them", {
        timeout: 90_000,
      }, async () => {
        const app = await appOf();
        const body = {
          tools: [WEATHER, TIME],
          tool_choice: { type: "function", function: { name: "get_weather" } },
          temperature: 0,
        };
        const whole = await chat(app, body);
        const choice = whole.choices[0]!;
        expect(choice.message.content).toBeNull();
        expect(choice.finish_reason).toBe("stop");
        expect(choice.message.tool_calls).toHaveLength(1);
        const [call] = choice.message.tool_calls!;
        expect(call!.type).toBe("function");
        expect(call!.id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
        expect(call!.function.name).toBe("get_weather");
        expectWeather(call!.function.arguments);

        const { chunks, calls } = await streamed(app, body);
        expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: null });
        expect(chunks.every((chunk) => chunk.choices[0]?.delta.content == null)).toBe(true);
        expect(calls).toHaveLength(1);
        expect(calls[0]!.name).toBe("get_weather");
        expect(calls[0]!.arguments).toBe(call!.function.arguments);
        expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
        greedy.set(place, [call!.function.arguments]);
      });

      it('"required": calls of the listed tools (finish_reason tool_calls); the ' +
        "streamed deltas join to them; parallel_tool_calls false allows one", {
        timeout: 90_000,
      }, async () => {
        const app = await appOf();
        // The tiny model keeps calling until the context is full: a length-cut list, its last call
        // unfinished.
        for (const seed of [1, 2, 3]) {
          const body = { tools: [WEATHER, TIME], tool_choice: "required", temperature: 1, seed };
          const whole = await chat(app, body);
          const choice = whole.choices[0]!;
          expect(choice.message.content).toBeNull();
          const calls = choice.message.tool_calls!;
          expect(calls.length).toBeGreaterThan(0);
          const complete = choice.finish_reason === "length" ? calls.slice(0, -1) : calls;
          if (choice.finish_reason !== "length") expect(choice.finish_reason).toBe("tool_calls");
          for (const each of calls)
            expect(["get_weather", "get_time"]).toContain(each.function.name);
          for (const each of complete)
            (each.function.name === "get_weather" ? expectWeather : expectTime)(
              each.function.arguments,
            );
          expect(new Set(calls.map((each) => each.id)).size).toBe(calls.length);
          const { chunks, calls: joined } = await streamed(app, body);
          expect(joined.map(({ name, arguments: args }) => ({ name, args }))).toEqual(
            calls.map((each) => ({ name: each.function.name, args: each.function.arguments })),
          );
          expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe(choice.finish_reason);
        }
        const single = await chat(app, {
          tools: [WEATHER, TIME],
          tool_choice: "required",
          parallel_tool_calls: false,
          temperature: 0,
        });
        expect(single.choices[0]!.message.tool_calls).toHaveLength(1);
        expect(single.choices[0]!.finish_reason).toBe("tool_calls");
        const [only] = single.choices[0]!.message.tool_calls!;
        (only!.function.name === "get_weather" ? expectWeather : expectTime)(
          only!.function.arguments,
        );
        greedy.set(place, [
          ...(greedy.get(place) ?? []),
          JSON.stringify(single.choices[0]!.message.tool_calls!.map((each) => each.function)),
        ]);
      });

      it('"auto" (the default with tools): the text before the model\'s <tool_call> blocks is ' +
        "content, each block a call (finish_reason tool_calls); the stream joins to the same", {
        timeout: 90_000,
      }, async () => {
        const app = await appOf();
        // The tiny model never writes a <tool_call> by itself: vLLM's structured_outputs choice
        // (allowed beside "auto", as vLLM allows it) makes it write one.
        const written =
          'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": ' +
          '{"city": "Paris", "unit": "celsius"}}\n</tool_call>\n<tool_call>{"name": ' +
          '"get_time", "arguments": {"zone": "CET"}}</tool_call>';
        for (const body of [
          { tools: [WEATHER, TIME] },
          { tools: [WEATHER, TIME], tool_choice: "auto" },
        ]) {
          const request = { ...body, structured_outputs: { choice: [written] }, temperature: 0 };
          const whole = await chat(app, request);
          const choice = whole.choices[0]!;
          expect(choice.message.content).toBe("Let me check.\n");
          expect(choice.finish_reason).toBe("tool_calls");
          const calls = choice.message.tool_calls!;
          expect(
            calls.map((each) => [each.type, each.function.name, each.function.arguments]),
          ).toEqual([
            ["function", "get_weather", '{"city": "Paris", "unit": "celsius"}'],
            ["function", "get_time", '{"zone": "CET"}'],
          ]);
          expect(calls.every((each) => /^chatcmpl-tool-[0-9a-f]{32}$/.test(each.id))).toBe(true);

          const { chunks, calls: joined } = await streamed(app, request);
          expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
          expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(
            "Let me check.\n",
          );
          expect(joined.map(({ name, arguments: args }) => [name, args])).toEqual(
            calls.map((each) => [each.function.name, each.function.arguments]),
          );
          expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("tool_calls");
        }
      });

      it('"auto" when the model writes text: content alone, ' +
        "no tool_calls, the finish reason of the text", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const whole = await chat(app, { tools: [WEATHER], temperature: 0, max_tokens: 12 });
        const choice = whole.choices[0]!;
        expect(typeof choice.message.content).toBe("string");
        expect(choice.message.content).not.toContain("<tool_call>");
        expect(choice.message.tool_calls).toBeUndefined();
        expect(["stop", "length"]).toContain(choice.finish_reason);
        const { chunks, calls } = await streamed(app, {
          tools: [WEATHER],
          temperature: 0,
          max_tokens: 12,
        });
        expect(calls).toEqual([]);
        expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(
          choice.message.content,
        );
      });

      it("max_tokens cuts a call: finish_reason length, " +
        "the arguments as far as they were written", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const whole = await chat(app, {
          tools: [WEATHER],
          tool_choice: { type: "function", function: { name: "get_weather" } },
          temperature: 0,
          max_tokens: 3,
        });
        expect(whole.choices[0]!.finish_reason).toBe("length");
        const args = whole.choices[0]!.message.tool_calls![0]!.function.arguments;
        expect(args.startsWith("{")).toBe(true);
        expect(() => JSON.parse(args) as unknown).toThrow();
      });
    });
  }

  it("both places write the same greedy calls", () => {
    expect(greedy.get("origin")).toHaveLength(2);
    expect(greedy.get("in-isolate WASM loop")).toEqual(greedy.get("origin"));
  });

  it(
    "a conversation with tool calls and results reaches the " +
      "template: tools listed, arguments as written, numbers kept",
    async () => {
      const app = appOnOrigin(origin?.url ?? "");
      const body = JSON.stringify({
        model: "tiny-llm",
        tools: [
          {
            type: "function",
            function: {
              name: "get_weather",
              parameters: {
                type: "object",
                properties: { days: { type: "number", default: 1.5 } },
              },
            },
          },
        ],
        tool_choice: "none",
        messages: [
          { role: "user", content: "Weather?" },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "get_weather", arguments: '{"city": "Paris", "days": 2.0}' },
              },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
        max_tokens: 1,
        return_token_ids: true,
      });
      // The schema's default written 1.0, as a Python client sends it: JSON.stringify cannot.
      const response = await app.request(
        "https://edge.test/v1/chat/completions",
        {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: body.replace('"default":1.5', '"default":1.0'),
        },
        env,
      );
      expect(response.status, await response.clone().text()).toBe(200);
      const { prompt_token_ids: ids } = await response.json<ChatResponse>();
      const detokenized = await call(app, "/detokenize", { model: "tiny-llm", tokens: ids });
      // As Python's jinja2 renders scripts/llm/chat-template.jinja (json.dumps for tojson): the
      // tools' 1.0 and the earlier call's 2.0 kept as written.
      expect((await detokenized.json<{ prompt: string }>()).prompt).toBe(
        "<|bos|><|system|>\nFunctions, each called as " +
          '<tool_call>{"name": …, "arguments": {…}}</tool_call>:\n' +
          '{"name": "get_weather", "parameters": {"type": "object", ' +
          '"properties": {"days": {"type": "number", "default": 1.0}}}}<|end|>\n' +
          "<|user|>\nWeather?<|end|>\n" +
          '<|assistant|>\n<tool_call>{"name": "get_weather", "arguments": ' +
          '{"city": "Paris", "days": 2.0}}</tool_call><|end|>\n' +
          "<|user|>\nResult of call_1: sunny<|end|>\n<|assistant|>\n",
      );
    },
  );

  it(
    'tool_choice "auto" or "none" with no ' + 'tools, and "none" with tools, generate text',
    async () => {
      const app = appOnOrigin(origin?.url ?? "");
      for (const body of [
        { tool_choice: "auto" },
        { tool_choice: "none", tools: [WEATHER] },
        { tool_choice: "auto", tools: [] },
      ]) {
        const answer = await chat(app, { ...body, max_tokens: 4 });
        expect(typeof answer.choices[0]!.message.content).toBe("string");
        expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
      }
    },
  );

  // Each other parser on a manifest that names it: the text the model writes (forced with
  // structured_outputs.choice) read into content and calls, streamed the same.
  const PARSED: readonly [ToolCallParser, string, string | null][] = [
    [
      "llama3_json",
      '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", ' +
        '"unit": "celsius"}}; {"name": "get_time", "parameters": {"zone": "CET"}}',
      null,
    ],
    [
      "mistral",
      'Sure.[TOOL_CALLS]get_weather{"city": "Paris", "unit": ' +
        '"celsius"}[TOOL_CALLS]get_time[ARGS]{"zone": "CET"}',
      "Sure.",
    ],
    ["pythonic", "[get_weather(city='Paris', unit='celsius'), get_time(zone='CET')]", null],
    [
      "llama4_pythonic",
      "<|python_start|>[get_weather(city='Paris', " +
        "unit='celsius'), get_time(zone='CET')]<|python_end|>",
      null,
    ],
  ];
  for (const [parser, written, content] of PARSED) {
    it(
      `"auto" with the ${parser} parser: the model's calls, ` +
        "the text before them as content, streamed the same",
      async () => {
        const app = appOnOrigin(origin?.url ?? "", {}, (generation) => ({
          ...generation,
          toolCallParser: parser,
        }));
        const body = {
          tools: [WEATHER, TIME],
          structured_outputs: { choice: [written] },
          temperature: 0,
        };
        const whole = await chat(app, body);
        expect(whole.choices[0]!.message.content).toBe(content);
        expect(whole.choices[0]!.finish_reason).toBe("tool_calls");
        const calls = whole.choices[0]!.message.tool_calls!.map((each) => [
          each.function.name,
          each.function.arguments,
        ]);
        expect(calls).toEqual([
          ["get_weather", '{"city": "Paris", "unit": "celsius"}'],
          ["get_time", '{"zone": "CET"}'],
        ]);
        const { chunks, calls: joined } = await streamed(app, body);
        expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(
          content ?? "",
        );
        expect(joined.map(({ name, arguments: args }) => [name, args])).toEqual(calls);
      },
    );
  }

  it(
    '"auto" on a model whose manifest names no tool-call ' +
      "parser: 400 naming tool_choice, explicit or by default",
    async () => {
      const app = appOnOrigin(
        origin?.url ?? "",
        {},
        ({ toolCallParser: _, ...generation }) => generation,
      );
      for (const [body, detail] of [
        [
          { tools: [WEATHER], tool_choice: "auto" },
          /needs a parser for the model's own tool-call format, and model tiny-llm names none/,
        ],
        [{ tools: [WEATHER] }, /the default when tools are sent/],
      ] as const) {
        const response = await call(app, "/v1/chat/completions", ask(body));
        expect(response.status).toBe(400);
        const answer = await problem(response);
        expect(answer.field).toBe("tool_choice");
        expect(answer.detail).toMatch(detail);
      }
    },
  );

  describe("refusals name the field", () => {
    const app = () => appOnOrigin(origin?.url ?? "");
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      [
        "tool_choice without tools",
        { tool_choice: "required" },
        "tool_choice",
        /tools must be set/,
      ],
      [
        "a named function that is not a tool",
        { tools: [WEATHER], tool_choice: { type: "function", function: { name: "get_time" } } },
        "tool_choice.function.name",
        /does not match/,
      ],
      [
        "a keyword the constraint cannot enforce (named)",
        {
          tools: [
            TIME,
            {
              type: "function",
              function: {
                name: "f",
                parameters: {
                  type: "object",
                  properties: { code: { type: "string", pattern: "(?<=a)b" } },
                },
              },
            },
          ],
          tool_choice: { type: "function", function: { name: "f" } },
        },
        "tools.1.function.parameters.properties.code.pattern",
        /pattern/,
      ],
      [
        'a keyword the constraint cannot enforce ("required")',
        {
          tools: [
            TIME,
            {
              type: "function",
              function: {
                name: "f",
                parameters: {
                  type: "object",
                  properties: { n: { type: "integer", multipleOf: 3 } },
                },
              },
            },
          ],
          tool_choice: "required",
        },
        "tools.1.function.parameters.properties.n.multipleOf",
        /multipleOf/,
      ],
      [
        'two tools defining one $defs name differently ("required")',
        {
          tools: [
            {
              type: "function",
              function: {
                name: "a",
                parameters: {
                  $defs: { X: { type: "string" } },
                  type: "object",
                  properties: { x: { $ref: "#/$defs/X" } },
                },
              },
            },
            {
              type: "function",
              function: {
                name: "b",
                parameters: {
                  $defs: { X: { type: "integer" } },
                  type: "object",
                  properties: { x: { $ref: "#/$defs/X" } },
                },
              },
            },
          ],
          tool_choice: "required",
        },
        "tools.1.function.parameters.$defs.X",
        /differently/,
      ],
      [
        "a forced call and response_format",
        { tools: [WEATHER], tool_choice: "required", response_format: { type: "json_object" } },
        "tool_choice",
        /not both/,
      ],
      [
        "a tool name with a space",
        { tools: [{ type: "function", function: { name: "get weather" } }], tool_choice: "none" },
        "tools.0.function.name",
        /letters/,
      ],
      [
        "an earlier call's arguments that are not JSON",
        {
          messages: [
            { role: "user", content: "Hi" },
            {
              role: "assistant",
              tool_calls: [
                { id: "c", type: "function", function: { name: "f", arguments: "{city:" } },
              ],
            },
          ],
        },
        "messages.1.tool_calls.0.function.arguments",
        /not valid JSON/,
      ],
      [
        "an assistant message with neither content nor tool_calls",
        { messages: [{ role: "user", content: "Hi" }, { role: "assistant" }] },
        "messages.1.content",
        /content or tool_calls/,
      ],
      [
        "a tool message without its call's id",
        {
          messages: [
            { role: "user", content: "Hi" },
            { role: "tool", content: "42" },
          ],
        },
        "messages.1.tool_call_id",
        /./,
      ],
    ];
    for (const [what, body, field, detail] of cases) {
      it(what, async () => {
        const response = await call(app(), "/v1/chat/completions", ask(body));
        expect(response.status).toBe(400);
        const answer = await problem(response);
        expect(answer.field, JSON.stringify(answer)).toBe(field);
        expect(answer.detail).toMatch(detail);
      });
    }
  });
});

// Workers AI's traditional function calling (developers.cloudflare.com/workers-ai/features/
// function-calling/traditional): tools in its legacy shape or OpenAI's, the model choosing,
// {response, tool_calls?} back. The tiny LLM answers in text (the calls' shape is
// test/unit/routes/workers-ai/tools.test.ts's); here the tools' way into the template, and the
// refusals.
describe.skipIf(origin === null)("Workers AI tools on /v1/run/{model}", () => {
  const LEGACY = {
    name: "get_weather",
    description: "The weather in a city",
    parameters: WEATHER.function.parameters,
  };
  const OPENAI = { type: "function", function: LEGACY };
  const run = async (app: App, body: Record<string, unknown>) =>
    await call(app, "/v1/run/tiny-llm", {
      messages: [{ role: "user", content: "What is the weather in Paris?" }],
      max_tokens: 8,
      temperature: 0,
      ...body,
    });

  it(
    "tools in either shape reach the chat template alike; " +
      "the text comes back as response, with no tool_calls",
    async () => {
      const app = appOnOrigin(origin?.url ?? "");
      const answers = [];
      for (const body of [
        {},
        { tools: [LEGACY] },
        { tools: [OPENAI] },
        { prompt: "What is the weather in Paris?", messages: undefined, tools: [LEGACY] },
      ]) {
        const response = await run(app, body);
        expect(response.status, await response.clone().text()).toBe(200);
        answers.push(
          await response.json<{
            response: string;
            tool_calls?: unknown;
            usage: { prompt_tokens: number };
          }>(),
        );
      }
      const [plain, legacy, openai, prompt] = answers;
      expect(legacy!.usage.prompt_tokens).toBeGreaterThan(plain!.usage.prompt_tokens + 40);
      expect(openai!.usage.prompt_tokens).toBe(legacy!.usage.prompt_tokens);
      expect(prompt!.usage.prompt_tokens).toBe(legacy!.usage.prompt_tokens);
      for (const answer of answers) {
        expect(typeof answer.response).toBe("string");
        expect(answer.tool_calls).toBeUndefined();
      }
      const streamed = await sseEvents(await run(app, { tools: [LEGACY], stream: true }));
      expect(streamed.at(-1)).toBe("[DONE]");
      const frames = streamed
        .slice(0, -1)
        .map((event) => JSON.parse(event) as { response: string; tool_calls?: unknown });
      expect(frames.map((frame) => frame.response).join("")).toBe(legacy!.response);
      expect(frames.every((frame) => frame.tool_calls === undefined)).toBe(true);
    },
  );

  it(
    'a tool\'s result goes back as {role: "tool", name, content}: ' +
      "the same prompt as chat's tool message with that call id",
    async () => {
      const app = appOnOrigin(origin?.url ?? "");
      const turns = (result: Record<string, unknown>) => [
        { role: "user", content: "What is the weather in Paris?" },
        { role: "assistant", content: "Checking." },
        { role: "tool", content: "sunny, 21 C", ...result },
      ];
      const viaRun = await run(app, { tools: [LEGACY], messages: turns({ name: "get_weather" }) });
      expect(viaRun.status, await viaRun.clone().text()).toBe(200);
      const viaChat = await call(app, "/v1/chat/completions", {
        model: "tiny-llm",
        tools: [OPENAI],
        tool_choice: "none",
        messages: turns({ tool_call_id: "get_weather" }),
        max_tokens: 8,
        temperature: 0,
      });
      const [run_, chat_] = [
        await viaRun.json<{ response: string; usage: { prompt_tokens: number } }>(),
        await viaChat.json<{
          choices: { message: { content: string } }[];
          usage: { prompt_tokens: number };
        }>(),
      ];
      expect(run_.usage.prompt_tokens).toBe(chat_.usage.prompt_tokens);
      expect(run_.response).toBe(chat_.choices[0]!.message.content);
    },
  );

  it(
    "refusals name the field: raw, JSON Mode beside tools, a model without a tool-call parser, " +
      "a malformed tool, a tool_choice it cannot honour, tool_calls where they do not belong",
    async () => {
      const app = appOnOrigin(origin?.url ?? "");
      const parserless = appOnOrigin(
        origin?.url ?? "",
        {},
        ({ toolCallParser: _, ...generation }) => generation,
      );
      for (const [on, body, field] of [
        [app, { prompt: "Hi", messages: undefined, raw: true, tools: [LEGACY] }, "raw"],
        [app, { tools: [LEGACY], response_format: { type: "json_object" } }, "response_format"],
        [parserless, { tools: [LEGACY] }, "tools"],
        [app, { tools: [{ name: "get weather" }] }, "tools.0"],
        [
          app,
          { tools: [LEGACY], tool_choice: { type: "function", function: { name: "get_time" } } },
          "tool_choice.function.name",
        ],
        [app, { tool_choice: "required" }, "tool_choice"],
        [
          app,
          {
            messages: [
              {
                role: "user",
                content: "Hi",
                tool_calls: [
                  { id: "c", type: "function", function: { name: "f", arguments: "{}" } },
                ],
              },
            ],
          },
          "messages.0.tool_calls",
        ],
        [
          app,
          {
            messages: [
              { role: "user", content: "Hi" },
              {
                role: "assistant",
                content: "",
                tool_calls: [
                  { id: "c", type: "function", function: { name: "f", arguments: "{city:" } },
                ],
              },
            ],
          },
          "messages.1.tool_calls.0.function.arguments",
        ],
      ] as const) {
        const response = await run(on, body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect((await problem(response)).field).toMatch(
          new RegExp(`^${field.replace(".", "\\.")}`),
        );
      }
    },
  );
});
