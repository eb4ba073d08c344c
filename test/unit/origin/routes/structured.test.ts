// Structured outputs on the reference origin's /v1/completions, as a real process on loopback:
// vLLM's `response_format` and `structured_outputs` (pinned to vllm-project/vllm:
// vllm/entrypoints/openai/completion/protocol.py CompletionRequest and its validators,
// vllm/entrypoints/generate/base/protocol.py ResponseFormat and
// structured_outputs_from_response_format, vllm/sampling_params.py StructuredOutputsParams).
// Every output that ends with "stop" is checked by others' code: JSON.parse, then Ajv
// (ajv-validator/ajv, JSON Schema 2020-12) against the schema sent; a choice is exactly one of
// its texts; a truncated one is a prefix the JSON automaton takes. The tiny model writes
// gibberish, but valid gibberish. The origin answers token ids (its text is ""): the tests
// read the text with the model's own tokenizer. On the CPU, so seeded outputs are fixed.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { start, step } from "../../../../src/generation/structured/json-bytes";
import {
  shapeOf,
  type StructuredOutputs,
} from "../../../../src/generation/structured/structured-outputs";
import { loadTextTokenizer } from "../../../../src/tokenizers/load";
import { startOrigin } from "../../../../scripts/lib/origin.mjs";

const STARTUP_MS = 150_000;
const tokenizer = loadTextTokenizer(
  "tokenizer.bin",
  new Uint8Array(readFileSync("models/tiny-llm/tokenizer.bin")),
);
const pieces = tokenizer.tokenPieces!({ skipSpecialTokens: true })!;
const EOS = 2;
const text = (ids: readonly number[]) => tokenizer.decode([...ids], { skipSpecialTokens: true });
const bytesOf = (ids: readonly number[]) => Uint8Array.from(ids.flatMap((id) => [...pieces(id)]));
const PROMPT = tokenizer.encode('He said, "', { addSpecialTokens: true });
const [CLOSE_BRACE, QUOTE] = [tokenizer.tokenToId("}")!, tokenizer.tokenToId('"')!];

const ajv = new Ajv2020({ strict: false });

/**
 * A pydantic model's schema (model_json_schema()): $defs and $ref, an enum, integers, an Optional,
 * a bounded list, constr(max_length=…).
 */
const PERSON = {
  $defs: {
    Address: {
      properties: {
        street: { maxLength: 12, title: "Street", type: "string" },
        zip: { title: "Zip", type: "integer" },
      },
      required: ["street", "zip"],
      title: "Address",
      type: "object",
    },
    Color: { enum: ["red", "green", "blue"], title: "Color", type: "string" },
  },
  properties: {
    name: { maxLength: 16, title: "Name", type: "string" },
    age: { title: "Age", type: "integer" },
    color: { $ref: "#/$defs/Color" },
    address: { anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }], default: null },
    tags: { items: { maxLength: 8, type: "string" }, maxItems: 3, title: "Tags", type: "array" },
  },
  required: ["name", "age", "color"],
  title: "Person",
  type: "object",
  additionalProperties: false,
};
const CHOICES = ["yes", "no", "maybe", "nothing"];

const Choice = z.object({
  text: z.string(),
  token_ids: z.array(z.number()),
  finish_reason: z.enum(["stop", "length"]),
  stop_reason: z.number().nullable(),
});
type Choice = z.infer<typeof Choice>;
const Chunk = z.object({
  choices: z.tuple([
    z.object({
      token_ids: z.array(z.number()),
      finish_reason: z.enum(["stop", "length"]).nullable(),
    }),
  ]),
});
const VllmError = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.number(),
  }),
});

/**
 * The output's text, checked: "stop" parses and validates (or is one of the choices), "length" is a
 * prefix the automaton takes.
 */
function expectValid(choice: Choice, spec: StructuredOutputs, maxTokens: number): void {
  const ids = choice.token_ids.filter((id) => id !== EOS);
  if (choice.finish_reason === "length") {
    expect(choice.token_ids).toHaveLength(maxTokens);
    const states = [...bytesOf(ids)].reduce(
      (at, byte) => at.flatMap((stack) => step(stack, byte)),
      start(shapeOf(spec)),
    );
    expect(states.length, text(ids)).toBeGreaterThan(0);
    return;
  }
  expect(choice.token_ids.slice(0, -1)).not.toContain(EOS);
  if ("choice" in spec) {
    expect(spec.choice).toContain(text(ids));
    return;
  }
  const value: unknown = JSON.parse(text(ids));
  const validate = ajv.compile("json" in spec ? (spec.json as object) : { type: "object" });
  expect(validate(value), `${text(ids)}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

describe("structured outputs on the origin's /v1/completions", () => {
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  const post = (body: Record<string, unknown>) =>
    fetch(`${origin.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-llm", prompt: PROMPT, return_token_ids: true, ...body }),
    });
  const whole = async (body: Record<string, unknown>): Promise<Choice> => {
    const response = await post(body);
    const json: unknown = await response.json();
    expect(response.status, JSON.stringify(json)).toBe(200);
    return z.object({ choices: z.tuple([Choice]) }).parse(json).choices[0];
  };
  /** The streamed chunks' token ids joined, and the last chunk's finish. */
  const streamed = async (body: Record<string, unknown>) => {
    const events = (await (await post({ ...body, stream: true })).text())
      .split("\n\n")
      .filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events
      .slice(0, -1)
      .map((event) => Chunk.parse(JSON.parse(event.slice("data: ".length))).choices[0]);
    return {
      ids: chunks.flatMap((chunk) => chunk.token_ids),
      finish: chunks.at(-1)!.finish_reason,
    };
  };
  const refused = async (body: Record<string, unknown>) => {
    const response = await post(body);
    expect(response.status, JSON.stringify(body).slice(0, 200)).toBe(400);
    return VllmError.parse(await response.json()).error;
  };

  beforeAll(async () => {
    // The FP32 graph: the INT8 graph's dynamic quantization scales activations over the whole
    // batch, so only FP32 logits are the same alone and batched.
    origin = await startOrigin({
      ORIGIN_EXECUTION_PROVIDERS: "cpu",
      ORIGIN_GENERATION_GRAPH: "decoder-fp32",
    });
  }, STARTUP_MS);
  afterAll(() => origin?.stop());

  it(
    "json_object: every output is an object (parsed, or a valid prefix " +
      "when cut); biased toward closing, greedy and most seeds close",
    async () => {
      const spec = { json_object: true } as const;
      for (let seed = 0; seed < 4; seed++) {
        const choice = await whole({
          response_format: { type: "json_object" },
          max_tokens: 64,
          temperature: 1,
          seed,
        });
        expect(text(choice.token_ids)).toMatch(/^\{/);
        expectValid(choice, spec, 64);
      }
      // The tiny model's strings seldom end: a client's logit_bias toward `"` and `}` lets them.
      const biased = {
        response_format: { type: "json_object" },
        max_tokens: 128,
        logit_bias: { [QUOTE]: 6, [CLOSE_BRACE]: 8 },
      };
      const greedy = await whole({ ...biased, temperature: 0 });
      expect(greedy).toMatchObject({ finish_reason: "stop", stop_reason: null });
      expect(greedy.token_ids.at(-1)).toBe(EOS);
      expectValid(greedy, spec, 128);
      let stopped = 0;
      for (let seed = 0; seed < 16; seed++) {
        const choice = await whole({ ...biased, temperature: 1, seed });
        expectValid(choice, spec, 128);
        if (choice.finish_reason === "stop") stopped += 1;
      }
      expect(stopped).toBeGreaterThanOrEqual(6); // 10 of these 16 on the CPU
    },
  );

  it(
    "json_schema (a pydantic model: $defs/$ref, an enum, integers, an " +
      "Optional, a list with maxItems): greedy and every seed stop and validate",
    async () => {
      const spec = { json: PERSON };
      const format = {
        type: "json_schema",
        json_schema: { name: "Person", schema: PERSON, strict: true },
      };
      const outputs = [await whole({ response_format: format, max_tokens: 200, temperature: 0 })];
      for (let seed = 0; seed < 12; seed++)
        outputs.push(
          await whole({ response_format: format, max_tokens: 200, temperature: 1, seed }),
        );
      for (const choice of outputs) {
        expect(choice.finish_reason).toBe("stop");
        expectValid(choice, spec, 200);
      }
      // The same constraint as structured_outputs.json, the schema as a JSON string (vLLM's `str |
      // dict`): the same ids.
      const again = await whole({
        structured_outputs: { json: JSON.stringify(PERSON), disable_any_whitespace: true },
        max_tokens: 200,
        temperature: 1,
        seed: 3,
      });
      expect(again.token_ids).toEqual(outputs[4]!.token_ids);
    },
  );

  it(
    "choice: exactly one of the texts, greedy and seeded; its EOS ends it " +
      "even before min_tokens, and with ignore_eos its last text token does",
    async () => {
      const spec = { choice: CHOICES };
      const seen = new Set<string>();
      for (const temperature of [0, 1]) {
        for (let seed = 0; seed < (temperature === 0 ? 1 : 10); seed++) {
          const choice = await whole({
            structured_outputs: { choice: CHOICES },
            max_tokens: 16,
            temperature,
            seed,
          });
          expect(choice).toMatchObject({ finish_reason: "stop", stop_reason: null });
          expectValid(choice, spec, 16);
          seen.add(text(choice.token_ids));
        }
      }
      expect(seen.size).toBeGreaterThan(1);
      const early = await whole({
        structured_outputs: { choice: CHOICES },
        max_tokens: 16,
        min_tokens: 12,
        temperature: 0,
      });
      expect(early.finish_reason).toBe("stop");
      expect(early.token_ids.length).toBeLessThan(12);
      expect(early.token_ids.at(-1)).toBe(EOS);
      const noEos = await whole({
        structured_outputs: { choice: ["yes", "no"] },
        max_tokens: 16,
        ignore_eos: true,
        temperature: 1,
        seed: 5,
      });
      expect(noEos.finish_reason).toBe("stop");
      expect(noEos.token_ids).not.toContain(EOS);
      expect(["yes", "no"]).toContain(text(noEos.token_ids));
    },
  );

  it(
    "meets allowed_token_ids with the grammar's mask, " +
      "and leaves the shared mask of the next request whole",
    async () => {
      const spec = { choice: CHOICES };
      const free = await whole({ structured_outputs: spec, max_tokens: 16, temperature: 0 });
      // Ban the greedy choice's first token: another choice is written, and then the unrestricted
      // request is as before.
      const allowed = [...Array(512).keys()].filter((id) => id !== free.token_ids[0]);
      const other = await whole({
        structured_outputs: spec,
        max_tokens: 16,
        temperature: 0,
        allowed_token_ids: allowed,
      });
      expectValid(other, spec, 16);
      expect(text(other.token_ids)).not.toBe(text(free.token_ids));
      expect(await whole({ structured_outputs: spec, max_tokens: 16, temperature: 0 })).toEqual(
        free,
      );
    },
  );

  it("streams the same ids as it answers whole, for each kind and seed", async () => {
    const bodies = [
      {
        response_format: { type: "json_object" },
        max_tokens: 128,
        logit_bias: { [QUOTE]: 6, [CLOSE_BRACE]: 8 },
        seed: 0,
      },
      {
        response_format: { type: "json_schema", json_schema: { name: "Person", schema: PERSON } },
        max_tokens: 200,
        seed: 1,
      },
      { structured_outputs: { choice: CHOICES }, max_tokens: 16, seed: 2 },
      { response_format: { type: "json_object" }, max_tokens: 20, seed: 3 },
    ];
    for (const body of bodies) {
      const choice = await whole({ ...body, temperature: 1 });
      const stream = await streamed({ ...body, temperature: 1 });
      expect(stream.ids).toEqual(choice.token_ids);
      expect(text(stream.ids)).toBe(text(choice.token_ids));
      expect(stream.finish).toBe(choice.finish_reason);
    }
  });

  it(
    "leaves requests batched beside a constrained one as " +
      "they are alone (greedy), and the constrained one too",
    async () => {
      const plain = [
        { prompt: [1, 45, 67, 89], max_tokens: 40, ignore_eos: true, temperature: 0 },
        { prompt: [1, 300, 301], max_tokens: 40, ignore_eos: true, temperature: 0 },
        { max_tokens: 40, ignore_eos: true, temperature: 0, response_format: { type: "text" } },
      ];
      const constrained = [
        {
          response_format: { type: "json_schema", json_schema: { name: "Person", schema: PERSON } },
          max_tokens: 200,
          temperature: 0,
        },
        { response_format: { type: "json_object" }, max_tokens: 60, temperature: 1, seed: 9 },
      ];
      const alone = [];
      for (const body of [...plain, ...constrained]) alone.push(await whole(body));
      const together = await Promise.all([...plain, ...constrained].map((body) => whole(body)));
      expect(together.map((choice) => choice.token_ids)).toEqual(
        alone.map((choice) => choice.token_ids),
      );
      // response_format "text" is no constraint: the same ids as the prompt with nothing.
      expect(alone[2]!.token_ids).toEqual(
        (await whole({ max_tokens: 40, ignore_eos: true, temperature: 0 })).token_ids,
      );
      expectValid(together[3]!, { json: PERSON }, 200);
    },
  );

  it(
    "cuts an output at max_tokens with finish_reason " +
      "length, a valid prefix, and serves the next request",
    async () => {
      for (const [body, spec] of [
        [
          {
            response_format: {
              type: "json_schema",
              json_schema: { name: "Person", schema: PERSON },
            },
          },
          { json: PERSON },
        ],
        [{ response_format: { type: "json_object" } }, { json_object: true }],
        [{ structured_outputs: { choice: ["nothing at all"] } }, { choice: ["nothing at all"] }],
      ] as const) {
        const choice = await whole({ ...body, max_tokens: 3, temperature: 0 });
        expect(choice.finish_reason).toBe("length");
        expectValid(choice, spec, 3);
      }
      expect(
        (await whole({ structured_outputs: { choice: CHOICES }, temperature: 0 })).finish_reason,
      ).toBe("stop");
    },
  );

  it("continues a structured output from its output so far (output_prefix_tokens) as one run", async () => {
    const body = {
      response_format: { type: "json_schema", json_schema: { name: "Person", schema: PERSON } },
      max_tokens: 120,
      temperature: 0,
      presence_penalty: 0.6,
    };
    const full = await whole(body);
    const k = Math.floor(full.token_ids.length / 2);
    const ask = {
      ...body,
      prompt: [...PROMPT, ...full.token_ids.slice(0, k)],
      max_tokens: 120 - k,
    };
    // As another replica takes it mid-stream: the first half is output, not prompt.
    const response = await post({ ...ask, output_prefix_tokens: k });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-output-prefix-tokens")).toBe(String(k));
    const rest = z.object({ choices: z.tuple([Choice]) }).parse(await response.json()).choices[0];
    expect([...full.token_ids.slice(0, k), ...rest.token_ids]).toEqual(full.token_ids);
    expect(rest.finish_reason).toBe(full.finish_reason);
    expectValid({ ...rest, token_ids: full.token_ids }, { json: PERSON }, 120);
    // Read as prompt (what vLLM would do), the automaton and the penalty start again: the
    // answer is another, and the origin echoes no prefix.
    const restarted = await post(ask);
    expect(restarted.headers.get("x-output-prefix-tokens")).toBeNull();
    const other = z.object({ choices: z.tuple([Choice]) }).parse(await restarted.json()).choices[0];
    expect([...full.token_ids.slice(0, k), ...other.token_ids]).not.toEqual(full.token_ids);
    // An output so far that the automaton cannot take, or no prompt left: 400 naming the field.
    for (const refusal of [
      { ...body, prompt: [...PROMPT, CLOSE_BRACE], output_prefix_tokens: 1 },
      { ...body, output_prefix_tokens: PROMPT.length },
    ])
      expect(await refused(refusal)).toMatchObject({ param: "output_prefix_tokens" });
  });

  it("refuses a union whose options start alike past 64 when it arrives, naming it", async () => {
    // 80 string options, all open after the opening quote: each would cost a trie walk per step.
    const wide = {
      anyOf: Array.from({ length: 80 }, (_, i) => ({ type: "string", maxLength: i + 1 })),
    };
    const response = await post({ structured_outputs: { json: wide }, max_tokens: 20 });
    expect(response.status).toBe(400);
    expect(VllmError.parse(await response.json()).error).toMatchObject({
      param: "structured_outputs.json",
      message: expect.stringContaining("/anyOf: 80 alternatives start alike"),
    });
  });

  it(
    "fails a schema open too many ways at once alone, with a 400 (the " +
      "stream with vLLM's error event), the batch beside it unharmed",
    async () => {
      // No union is wider than 9 where it starts, but 9 arrays of 8 string options leave 72 ways
      // open after `["`: only the matcher sees that, mid-generation.
      const strings = {
        anyOf: Array.from({ length: 8 }, (_, i) => ({ type: "string", maxLength: i + 1 })),
      };
      const wide = {
        anyOf: Array.from({ length: 9 }, (_, i) => ({
          type: "array",
          items: strings,
          maxItems: i + 1,
        })),
      };
      const body = { structured_outputs: { json: wide }, max_tokens: 20, temperature: 0 };
      const plain = { max_tokens: 30, ignore_eos: true, temperature: 0 };
      const alone = await whole(plain);
      const [response, beside] = await Promise.all([post(body), whole(plain)]);
      expect(response.status).toBe(400);
      expect(VllmError.parse(await response.json()).error).toMatchObject({
        param: "structured_outputs",
        message: expect.stringContaining("ways open at once"),
      });
      expect(beside.token_ids).toEqual(alone.token_ids);
      const events = (await (await post({ ...body, stream: true })).text())
        .split("\n\n")
        .filter(Boolean);
      expect(events.at(-1)).toBe("data: [DONE]");
      expect(
        VllmError.parse(JSON.parse(events.at(-2)!.slice("data: ".length))).error,
      ).toMatchObject({
        code: 400,
        param: "structured_outputs",
      });
    },
  );

  it(
    "refuses what it cannot enforce and malformed " +
      "constraints with vLLM's 400, naming the field",
    async () => {
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [
          { structured_outputs: { regex: "(a)\\1" } },
          "structured_outputs.regex",
          /^structured_outputs\.regex: the regex has a backreference at position 3$/,
        ],
        [
          { structured_outputs: { grammar: "root ::= 'a'" } },
          "structured_outputs.grammar",
          /grammar is not supported/,
        ],
        [
          { structured_outputs: { structural_tag: "{}" } },
          "structured_outputs.structural_tag",
          /structural_tag is not supported/,
        ],
        [
          { response_format: { type: "structural_tag", format: {} } },
          "response_format",
          /structural_tag/,
        ],
        [
          { structured_outputs: { json_object: true, whitespace_pattern: "[ ]?" } },
          "structured_outputs.whitespace_pattern",
          /whitespace_pattern/,
        ],
        // What the schema compiler cannot keep is named by its place in the schema.
        [
          {
            structured_outputs: {
              json: { type: "object", properties: { code: { type: "string", format: "email" } } },
            },
          },
          "structured_outputs.json",
          /^structured_outputs\.json: \/properties\/code\/format: the keyword "format" is not supported/,
        ],
        [
          {
            structured_outputs: {
              json: {
                type: "object",
                properties: { code: { type: "string", pattern: "^[A-Z]+(?=x)$" } },
              },
            },
          },
          "structured_outputs.json",
          /^structured_outputs\.json: \/properties\/code\/pattern: the regex has a lookaround at position 7$/,
        ],
        [
          {
            response_format: {
              type: "json_schema",
              json_schema: { name: "n", schema: { type: "integer", not: { const: 3 } } },
            },
          },
          "response_format.json_schema.schema",
          /^response_format\.json_schema\.schema: \/not: the keyword "not" is not supported/,
        ],
        [
          { structured_outputs: { json: "{not json" } },
          "structured_outputs.json",
          /not valid JSON/,
        ],
        // vLLM's checks (completion/protocol.py validate_response_format,
        // check_structured_outputs_count; sampling_params.py __post_init__).
        [
          { response_format: { type: "json_schema" } },
          "response_format",
          /^When response_format type is 'json_schema', the 'json_schema' field must be provided\.$/,
        ],
        [
          { response_format: { type: "json_schema", json_schema: { schema: { type: "object" } } } },
          "response_format.json_schema.name",
          /expected string/,
        ],
        [{ response_format: { type: "xml" } }, "response_format.type", /./],
        [{ response_format: "json_object" }, "response_format", /./],
        [
          { structured_outputs: { json: { type: "object" }, choice: ["a"] } },
          "structured_outputs",
          /^You can only use one kind of constraints for structured outputs \('json', 'regex' or 'choice'\)\.$/,
        ],
        [
          { structured_outputs: { choice: ["a", "b"] }, response_format: { type: "json_object" } },
          "structured_outputs",
          /^You can only use one kind of structured outputs constraint but multiple are specified: choice, json_object$/,
        ],
        [
          { structured_outputs: { disable_any_whitespace: true } },
          "structured_outputs",
          /^You must use one kind of structured outputs constraint but none are specified$/,
        ],
        [
          { structured_outputs: { json_object: false } },
          "structured_outputs.json_object",
          /only true/,
        ],
        [{ structured_outputs: { choice: [] } }, "structured_outputs.choice", /1–1024/],
        [{ structured_outputs: { choice: [""] } }, "structured_outputs.choice", /non-empty/],
        [
          {
            structured_outputs: {
              json: {
                type: "object",
                properties: Object.fromEntries(
                  Array.from({ length: 200 }, (_, i) => [
                    `property_with_a_long_name_${i}`,
                    {
                      type: "string",
                      title:
                        "A property whose title is long enough that two hundred of " +
                        "them take more room than this origin lets a constraint take",
                    },
                  ]),
                ),
              },
            },
          },
          "structured_outputs.json",
          /over this origin's limit of 32768/,
        ],
        [{ guided_json: { type: "object" } }, "guided_json", /not supported/],
      ];
      for (const [body, param, message] of cases) {
        const error = await refused(body);
        expect(error, JSON.stringify(body).slice(0, 200)).toMatchObject({
          type: "BadRequestError",
          code: 400,
          param,
        });
        expect(error.message).toMatch(message);
      }
    },
  );

  it(
    "takes vLLM's response_format over structured_outputs' field " +
      "of the same kind, and the whitespace options either way",
    async () => {
      const other = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };
      const format = { type: "json_schema", json_schema: { name: "Person", schema: PERSON } };
      const byFormat = await whole({
        response_format: format,
        max_tokens: 200,
        temperature: 1,
        seed: 7,
      });
      const both = await whole({
        response_format: format,
        structured_outputs: {
          json: other,
          disable_any_whitespace: false,
          disable_additional_properties: true,
        },
        max_tokens: 200,
        temperature: 1,
        seed: 7,
      });
      expect(both.token_ids).toEqual(byFormat.token_ids);
      expectValid(both, { json: PERSON }, 200);
    },
  );
});

describe("an origin model folder without its tokenizer file", () => {
  it(
    "serves plain requests and answers structured ones with a 400 naming structured_outputs",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "origin-no-tokenizer-"));
      try {
        mkdirSync(join(dir, "tiny-llm"));
        const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8"));
        writeFileSync(join(dir, "tiny-llm", "manifest.json"), JSON.stringify(manifest));
        for (const graph of Object.values<{ file: string }>(manifest.graphs))
          copyFileSync(join("models/tiny-llm", graph.file), join(dir, "tiny-llm", graph.file));
        const origin = await startOrigin({ ORIGIN_MODELS: dir });
        try {
          const post = (body: Record<string, unknown>) =>
            fetch(`${origin.url}/v1/completions`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ prompt: [1, 5, 6], max_tokens: 4, ...body }),
            });
          expect((await post({})).status).toBe(200);
          const response = await post({ response_format: { type: "json_object" } });
          expect(response.status).toBe(400);
          expect(VllmError.parse(await response.json()).error).toMatchObject({
            param: "structured_outputs",
            message: expect.stringContaining("cannot serve structured outputs"),
          });
        } finally {
          await origin.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    STARTUP_MS,
  );
});
