// Structured outputs through the edge, in both places: OpenAI's `response_format` (json_object,
// json_schema) and vLLM's `structured_outputs` (json, choice, json_object) — the request shapes of
// vllm-project/vllm vllm/entrypoints/openai/engine/protocol.py (ResponseFormat,
// JsonSchemaResponseFormat: the schema under "schema") and vllm/sampling_params.py
// (StructuredOutputsParams). On the origin the edge sends `structured_outputs` and the origin masks
// its sampler; in the isolate the WASM loop masks its own. The tiny LLM writes nonsense, but
// nonsense that parses and validates: every output that ends with "stop" is checked here
// (JSON.parse and the schema's constraints by hand; Ajv, which compiles validators with `new
// Function`, cannot run in workerd — test/unit/generation/structured/structured-outputs.test.ts
// checks the automaton against it).
import { describe, expect, inject, it } from "vitest";
import { problem } from "../../support/workers/helpers";
import {
  appInIsolate,
  appOnOrigin,
  bothPlaces,
  call,
  sseEvents,
  type App,
} from "../../support/workers/generation";

const origin = inject("llmOrigin");

interface ChatResponse {
  choices: { message: { content: string }; finish_reason: string }[];
}
interface CompletionResponse {
  choices: { text: string; finish_reason: string }[];
}

const PERSON = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 12 },
    age: { type: "integer" },
    color: { enum: ["red", "green", "blue"] },
    tags: { type: "array", items: { type: "string", maxLength: 6 }, maxItems: 3 },
  },
  required: ["name", "age", "color"],
  additionalProperties: false,
};

/** PERSON's constraints, checked by hand. */
function expectPerson(text: string): void {
  const value = JSON.parse(text) as Record<string, unknown>;
  expect(
    Object.keys(value).every((key) => key in PERSON.properties),
    text,
  ).toBe(true);
  expect([...String(value.name)].length).toBeLessThanOrEqual(12);
  expect(typeof value.name).toBe("string");
  expect(Number.isInteger(value.age)).toBe(true);
  expect(["red", "green", "blue"]).toContain(value.color);
  if (value.tags !== undefined) {
    expect(
      Array.isArray(value.tags) &&
        value.tags.length <= 3 &&
        value.tags.every((tag) => typeof tag === "string" && [...tag].length <= 6),
      text,
    ).toBe(true);
  }
  // Compact, in declared order: what the edge and the origin both write.
  expect(text).toBe(JSON.stringify(value));
}

const SENTIMENT = ["positive", "negative", "neutral"];

async function chat(app: App, body: Record<string, unknown>): Promise<ChatResponse> {
  const response = await call(app, "/v1/chat/completions", {
    model: "tiny-llm",
    messages: [{ role: "user", content: "Describe a person." }],
    ...body,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return await response.json<ChatResponse>();
}
async function complete(app: App, body: Record<string, unknown>): Promise<CompletionResponse> {
  const response = await call(app, "/v1/completions", {
    model: "tiny-llm",
    prompt: "The film was a delight from start to end. Sentiment:",
    ...body,
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return await response.json<CompletionResponse>();
}

describe.skipIf(origin === null)("structured outputs, on the origin and in the isolate", () => {
  const places = bothPlaces(origin);
  /** Per place, greedy outputs, to compare the places. */
  const greedy = new Map<string, string[]>();

  for (const [place, appOf] of places) {
    describe(place, () => {
      it("json_schema: greedy and seeded outputs that end with " +
        "stop validate; the stream joins to the same text", {
        timeout: 90_000,
      }, async () => {
        const app = await appOf();
        const format = {
          type: "json_schema",
          json_schema: { name: "person", schema: PERSON, strict: true },
        };
        const first = await chat(app, { response_format: format, max_tokens: 120, temperature: 0 });
        expect(first.choices[0]!.finish_reason).toBe("stop");
        expectPerson(first.choices[0]!.message.content);
        let stopped = 0;
        for (const seed of [1, 2, 3, 4, 5, 6]) {
          const [choice] = (
            await chat(app, { response_format: format, max_tokens: 120, temperature: 1, seed })
          ).choices;
          if (choice!.finish_reason !== "stop") continue;
          stopped += 1;
          expectPerson(choice!.message.content);
        }
        expect(stopped).toBeGreaterThanOrEqual(3); // bounded strings let most samples close
        const streamed = await call(app, "/v1/chat/completions", {
          model: "tiny-llm",
          messages: [{ role: "user", content: "Describe a person." }],
          response_format: format,
          max_tokens: 120,
          temperature: 1,
          seed: 2,
          stream: true,
        });
        const events = (await sseEvents(streamed))
          .filter((data) => data !== "[DONE]")
          .map((data) => JSON.parse(data) as { choices: { delta: { content?: string } }[] });
        const joined = events.map((event) => event.choices[0]?.delta.content ?? "").join("");
        expect(joined).toBe(
          (await chat(app, { response_format: format, max_tokens: 120, temperature: 1, seed: 2 }))
            .choices[0]!.message.content,
        );
        greedy.set(place, [first.choices[0]!.message.content]);
      });

      it("json_object: an object, compact; vLLM's " +
        "structured_outputs.json takes the schema as JSON text too", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const object = await chat(app, {
          response_format: { type: "json_object" },
          max_tokens: 48,
          temperature: 0,
        });
        const text = object.choices[0]!.message.content;
        expect(text.startsWith("{"), text).toBe(true);
        if (object.choices[0]!.finish_reason === "stop")
          expect(typeof JSON.parse(text)).toBe("object");
        const asText = await complete(app, {
          structured_outputs: { json: JSON.stringify(PERSON) },
          max_tokens: 120,
          temperature: 0,
        });
        expect(asText.choices[0]!.finish_reason).toBe("stop");
        expectPerson(asText.choices[0]!.text);
        greedy.get(place)?.push(text, asText.choices[0]!.text);
      });

      it("choice: the text is exactly one of the choices, greedy or sampled, then a stop", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const seen = new Set<string>();
        for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
          const [choice] = (
            await complete(app, {
              structured_outputs: { choice: SENTIMENT },
              max_tokens: 16,
              temperature: 1.5,
              seed,
            })
          ).choices;
          expect(SENTIMENT).toContain(choice!.text);
          expect(choice!.finish_reason).toBe("stop");
          seen.add(choice!.text);
        }
        expect(seen.size).toBeGreaterThan(1); // sampled among the choices, not pinned to one
        const [first] = (
          await complete(app, {
            structured_outputs: { choice: SENTIMENT },
            max_tokens: 16,
            temperature: 0,
          })
        ).choices;
        expect(SENTIMENT).toContain(first!.text);
        greedy.get(place)?.push(first!.text);
      });

      it("regex: the whole text matches the pattern, greedy or sampled, streamed the same", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        // A date, a word of 2–8 letters, an optional non-ASCII suffix: the tiny vocabulary has no
        // "é" token, so it is written in bytes.
        const regex = "(19|20)\\d{2}-(0[1-9]|1[0-2]) [a-z]{2,8}( café)?";
        const whole = new RegExp(`^(?:${regex})$`, "u");
        for (const seed of [1, 2, 3, 4, 5]) {
          const [choice] = (
            await complete(app, {
              structured_outputs: { regex },
              max_tokens: 40,
              temperature: 1.2,
              seed,
            })
          ).choices;
          expect(choice!.text, choice!.text).toMatch(whole);
          expect(choice!.finish_reason).toBe("stop");
        }
        const text = (
          await chat(app, { structured_outputs: { regex }, max_tokens: 40, temperature: 0 })
        ).choices[0]!.message.content;
        expect(text).toMatch(whole);
        const events = await sseEvents(
          await call(app, "/v1/chat/completions", {
            model: "tiny-llm",
            messages: [{ role: "user", content: "Describe a person." }],
            structured_outputs: { regex },
            max_tokens: 40,
            temperature: 0,
            stream: true,
          }),
        );
        const streamed = events
          .slice(0, -1)
          .map(
            (event) =>
              (JSON.parse(event) as { choices: { delta: { content?: string } }[] }).choices[0]
                ?.delta.content ?? "",
          )
          .join("");
        expect(streamed).toBe(text);
        greedy.get(place)?.push(text);
      });

      it("Workers AI's JSON Mode on /v1/run answers the parsed " +
        "value; the Responses API's text.format writes the same JSON", {
        timeout: 60_000,
      }, async () => {
        const app = await appOf();
        const messages = [{ role: "user", content: "Describe a person." }];
        const run = await call(app, "/v1/run/tiny-llm", {
          messages,
          response_format: { type: "json_schema", json_schema: PERSON },
          max_tokens: 120,
          temperature: 0,
        });
        expect(run.status, await run.clone().text()).toBe(200);
        const { response } = await run.json<{ response: Record<string, unknown> }>();
        expectPerson(JSON.stringify(response));
        const chatted = await chat(app, {
          response_format: { type: "json_schema", json_schema: { name: "person", schema: PERSON } },
          max_tokens: 120,
          temperature: 0,
        });
        expect(JSON.stringify(response)).toBe(chatted.choices[0]!.message.content);
        const answered = await call(app, "/v1/responses", {
          model: "tiny-llm",
          input: "Describe a person.",
          text: { format: { type: "json_schema", name: "person", schema: PERSON, strict: true } },
          max_output_tokens: 120,
          temperature: 0,
        });
        expect(answered.status, await answered.clone().text()).toBe(200);
        const body = await answered.json<{
          output: { content: { text: string }[] }[];
          text: { format: { type: string; name: string } };
        }>();
        expect(body.output[0]!.content[0]!.text).toBe(chatted.choices[0]!.message.content);
        expect(body.text.format).toMatchObject({ type: "json_schema", name: "person" });
        // JSON Mode does not stream (as Workers AI's), and a value cut short by max_tokens is a 422
        // saying so.
        expect(
          (
            await problem(
              await call(app, "/v1/run/tiny-llm", {
                messages,
                response_format: { type: "json_object" },
                stream: true,
              }),
            )
          ).field,
        ).toBe("stream");
        const cut = await call(app, "/v1/run/tiny-llm", {
          messages,
          response_format: { type: "json_schema", json_schema: PERSON },
          max_tokens: 3,
        });
        expect(cut.status).toBe(422);
        expect((await problem(cut)).field).toBe("max_tokens");
      });

      it("max_tokens cuts a structured output short: " +
        "finish_reason length, a prefix of a valid output", {
        timeout: 30_000,
      }, async () => {
        const app = await appOf();
        const [choice] = (
          await chat(app, {
            response_format: {
              type: "json_schema",
              json_schema: { name: "person", schema: PERSON },
            },
            max_tokens: 3,
            temperature: 0,
          })
        ).choices;
        expect(choice!.finish_reason).toBe("length");
        expect(greedy.get(place)?.[0]?.startsWith(choice!.message.content)).toBe(true);
      });
    });
  }

  it("both places write the same greedy outputs (the same FP32 graph, the same mask)", () => {
    expect(greedy.get("origin")).toHaveLength(5);
    expect(greedy.get("in-isolate WASM loop")).toEqual(greedy.get("origin"));
  });

  it(
    "a union too wide for the origin's matcher " + "is a 400 at the edge, before any origin call",
    async () => {
      // Port 9 (discard) has nothing listening: a request that reached the origin would be a 5xx.
      const unreachable = appOnOrigin("http://127.0.0.1:9");
      const consts = { anyOf: Array.from({ length: 500 }, (_, i) => ({ const: `v${i}` })) };
      for (const [extra, field] of [
        [
          { response_format: { type: "json_schema", json_schema: { name: "c", schema: consts } } },
          "response_format.json_schema.schema.anyOf",
        ],
        [{ structured_outputs: { json: consts } }, "structured_outputs.json.anyOf"],
      ] as const) {
        const response = await call(unreachable, "/v1/chat/completions", {
          model: "tiny-llm",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 8,
          ...extra,
        });
        const answer = await problem(response);
        expect([response.status, answer.field], answer.detail).toEqual([400, field]);
        expect(answer.detail).toContain("500 alternatives start alike");
      }
    },
  );

  it("what cannot be enforced is a 400 naming its place; malformed requests too", async () => {
    const app = await appInIsolate(origin?.faultyUrl ?? "");
    const cases: [Record<string, unknown>, string][] = [
      [
        {
          response_format: {
            type: "json_schema",
            json_schema: {
              name: "p",
              schema: {
                type: "object",
                properties: { code: { type: "string", pattern: "^([A-Z])\\1$" } },
              },
            },
          },
        },
        "response_format.json_schema.schema.properties.code.pattern",
      ],
      [
        {
          response_format: {
            type: "json_schema",
            json_schema: { name: "p", schema: { type: "integer", multipleOf: 5 } },
          },
        },
        "response_format.json_schema.schema.multipleOf",
      ],
      [
        { response_format: { type: "json_schema", json_schema: { name: "p" } } },
        "response_format.json_schema.schema",
      ],
      [
        {
          response_format: { type: "json_schema", json_schema: { name: "bad name!", schema: {} } },
        },
        "response_format.json_schema.name",
      ],
      [{ response_format: { type: "xml" } }, "response_format.type"],
      [{ structured_outputs: { regex: "(a)\\1" } }, "structured_outputs.regex"],
      [{ structured_outputs: { grammar: "root ::= 'a'" } }, "structured_outputs.grammar"],
      [{ structured_outputs: { choice: ["a"], json_object: true } }, "structured_outputs"],
      [{ structured_outputs: { json: "{not json" } }, "structured_outputs.json"],
      [
        { structured_outputs: { json: { $ref: "#/$defs/Missing" } } },
        "structured_outputs.json.$ref",
      ],
    ];
    // 80 string options all open after the opening quote: over the core's limit of 64 ways, the
    // format is refused when compiled, a 400 naming the union, instead of walking the trie 80
    // times a step.
    const wide = {
      anyOf: Array.from({ length: 80 }, (_, i) => ({ type: "string", maxLength: i + 1 })),
    };
    const open = await call(app, "/v1/chat/completions", {
      model: "tiny-llm",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 20,
      temperature: 0,
      response_format: { type: "json_schema", json_schema: { name: "w", schema: wide } },
    });
    const refusal = await problem(open);
    expect([open.status, refusal.field], refusal.detail).toEqual([
      400,
      "response_format.json_schema.schema.anyOf",
    ]);
    expect(refusal.detail).toContain("over the limit of 64");
    const elsewhere: [string, Record<string, unknown>, string][] = [
      [
        "/v1/responses",
        {
          model: "tiny-llm",
          input: "hi",
          text: {
            format: { type: "json_schema", name: "p", schema: { type: "string", format: "email" } },
          },
        },
        "text.format.schema.format",
      ],
      [
        "/v1/run/tiny-llm",
        {
          prompt: "hi",
          response_format: { type: "json_schema", json_schema: { type: "number", multipleOf: 2 } },
        },
        "response_format.json_schema.multipleOf",
      ],
    ];
    for (const [path, extra, field] of elsewhere) {
      const answer = await problem(await call(app, path, extra));
      expect([answer.status, answer.field], answer.detail).toEqual([400, field]);
    }
    for (const [extra, field] of cases) {
      const response = await call(app, "/v1/chat/completions", {
        model: "tiny-llm",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
        ...extra,
      });
      const answer = await problem(response);
      expect(response.status, JSON.stringify(extra)).toBe(400);
      expect(answer.field, answer.detail).toBe(field);
    }
  });
});
