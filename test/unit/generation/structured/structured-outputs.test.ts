// Structured outputs' automaton and token masks (src/generation/structured/), checked against
// what others wrote: JSON.parse (with a fatal UTF-8 decoder) for the JSON grammar, and Ajv
// (ajv-validator/ajv, its JSON Schema 2020-12 validator) for every schema: whatever the
// automaton lets a generator write must validate, and what it refuses must not be JSON.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { canEnd, start, step, type Stack } from "../../../../src/generation/structured/json-bytes";
import { stateKey } from "../../../../src/generation/structured/state-key";
import { compileSchema } from "../../../../src/generation/structured/json-schema";
import { SchemaError } from "../../../../src/generation/structured/schema-error";
import {
  ANY_VALUE,
  choiceOf,
  JSON_OBJECT,
  type Shape,
} from "../../../../src/generation/structured/shapes";
import {
  shapeOf,
  TokenMatcher,
  VocabularyTrie,
} from "../../../../src/generation/structured/structured-outputs";
import { createPrng, type Prng } from "../../../../src/generation/prng";
import { loadTextTokenizer } from "../../../../src/tokenizers/load";

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const show = (bytes: Uint8Array | number[]) =>
  new TextDecoder().decode(Uint8Array.from(bytes)).replace(/[^ -~]/g, "?");

function run(shape: Shape, bytes: Uint8Array): readonly Stack[] {
  let states = start(shape);
  for (const byte of bytes) states = states.flatMap((stack) => step(stack, byte));
  return states;
}
const accepts = (shape: Shape, bytes: Uint8Array) => run(shape, bytes).some(canEnd);

/** JSON's own verdict on bytes with no whitespace: well-formed UTF-8 and JSON.parse succeeds. */
function isJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(strictUtf8.decode(bytes));
    return true;
  } catch {
    return false;
  }
}

/** A random JSON value, seeded, with strings that need escapes and multi-byte UTF-8. */
function randomValue(rng: Prng, depth = 0): unknown {
  const pick = Math.floor(rng.next() * (depth > 3 ? 4 : 6));
  const pieces = ["a", "é", "漢", "😀", '"', "\\", "\n", "\u0001", "/", "x y"];
  switch (pick) {
    case 0:
      return [null, true, false][Math.floor(rng.next() * 3)];
    case 1:
      return [0, -1, 12, 3.5, -0.25, 1e21, 6.02e-23, 123456789][Math.floor(rng.next() * 8)];
    case 2:
    case 3:
      return Array.from(
        { length: Math.floor(rng.next() * 4) },
        () => pieces[Math.floor(rng.next() * pieces.length)],
      ).join("");
    case 4:
      return Array.from({ length: Math.floor(rng.next() * 4) }, () => randomValue(rng, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(rng.next() * 4) }, (_, i) => [
          `k${i}${pieces[i]}`,
          randomValue(rng, depth + 1),
        ]),
      );
  }
}

describe("the JSON automaton", () => {
  it(
    "takes every compact JSON value, every prefix of " +
      "it stays alive, and it may end exactly at the end",
    () => {
      const rng = createPrng(7);
      for (let n = 0; n < 400; n += 1) {
        const bytes = utf8.encode(JSON.stringify(randomValue(rng)));
        let states = start(ANY_VALUE);
        for (const [i, byte] of bytes.entries()) {
          states = states.flatMap((stack) => step(stack, byte));
          expect(states.length, `${show(bytes)} at ${i}`).toBeGreaterThan(0);
        }
        expect(states.some(canEnd)).toBe(true);
      }
    },
  );

  it(
    "agrees with JSON.parse on 20,000 mutated " + "documents (bytes changed, dropped, inserted)",
    () => {
      const rng = createPrng(11);
      const alphabet = utf8.encode('{}[]",:\\0123456789-+.eEtrufalsn\u00e9\u00ffxu');
      const extra = [0x01, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff];
      let agreedValid = 0;
      for (let n = 0; n < 20000; n += 1) {
        const bytes = [...utf8.encode(JSON.stringify(randomValue(rng)))];
        for (let edits = 1 + Math.floor(rng.next() * 2); edits > 0; edits -= 1) {
          const at = Math.floor(rng.next() * (bytes.length + 1));
          const byte =
            rng.next() < 0.8
              ? alphabet[Math.floor(rng.next() * alphabet.length)]!
              : extra[Math.floor(rng.next() * extra.length)]!;
          const kind = Math.floor(rng.next() * 3);
          if (kind === 0) bytes.splice(at, 1, byte);
          else if (kind === 1) bytes.splice(at, 1);
          else bytes.splice(at, 0, byte);
        }
        const mutated = Uint8Array.from(bytes);
        expect(accepts(ANY_VALUE, mutated), show(mutated)).toBe(isJson(mutated));
        if (isJson(mutated)) agreedValid += 1;
      }
      // the corpus holds valid documents too, not only broken ones
      expect(agreedValid).toBeGreaterThan(1000);
    },
  );

  it("writes compact JSON only: no whitespace between tokens, none after the value", () => {
    expect(accepts(ANY_VALUE, utf8.encode('{"a":[1,2]}'))).toBe(true);
    expect(accepts(ANY_VALUE, utf8.encode('{"a": [1,2]}'))).toBe(false);
    expect(accepts(ANY_VALUE, utf8.encode('{"a":[1,2]} '))).toBe(false);
    expect(accepts(ANY_VALUE, utf8.encode('" spaces inside strings "'))).toBe(true);
  });

  it("json_object admits objects only; a choice admits its texts exactly", () => {
    expect(accepts(JSON_OBJECT, utf8.encode('{"a":1}'))).toBe(true);
    expect(accepts(JSON_OBJECT, utf8.encode("[1]"))).toBe(false);
    expect(accepts(JSON_OBJECT, utf8.encode("1"))).toBe(false);
    const choice = choiceOf(["yes", "no", "nothing"]);
    expect(["yes", "no", "nothing"].map((text) => accepts(choice, utf8.encode(text)))).toEqual([
      true,
      true,
      true,
    ]);
    expect(
      ["ye", "noth", "yess", '"yes"'].map((text) => accepts(choice, utf8.encode(text))),
    ).toEqual([false, false, false, false]);
    expect(run(choice, utf8.encode("no")).length).toBe(2); // "no" may end, or go on to "nothing"
  });
});

const ajv = new Ajv2020({ strict: false });

/** Schemas as clients send them (pydantic's and zod's output among them). */
const SCHEMAS = {
  "pydantic model with $defs, enums and Optional": {
    $defs: {
      Address: {
        properties: { street: { type: "string" }, zip: { type: "integer" } },
        required: ["street", "zip"],
        title: "Address",
        type: "object",
      },
      Color: { enum: ["red", "green", "blue"], title: "Color", type: "string" },
    },
    properties: {
      name: { title: "Name", type: "string" },
      age: { title: "Age", type: "integer" },
      color: { $ref: "#/$defs/Color" },
      address: { anyOf: [{ $ref: "#/$defs/Address" }, { type: "null" }], default: null },
      tags: { items: { type: "string" }, type: "array", maxItems: 3 },
    },
    required: ["name", "age", "color"],
    title: "Person",
    type: "object",
    additionalProperties: false,
  },
  "arrays with bounds, numbers, booleans, const": {
    type: "object",
    properties: {
      scores: { type: "array", items: { type: "number" }, minItems: 2, maxItems: 4 },
      ok: { type: "boolean" },
      version: { const: 2 },
      matrix: {
        type: "array",
        items: { type: "array", items: { type: "integer" }, minItems: 1, maxItems: 2 },
        maxItems: 2,
      },
    },
    required: ["scores", "ok", "version"],
  },
  "a recursive tree": {
    $defs: {
      Node: {
        type: "object",
        properties: {
          value: { type: "integer" },
          children: { type: "array", items: { $ref: "#/$defs/Node" }, maxItems: 2 },
        },
        required: ["value"],
      },
    },
    $ref: "#/$defs/Node",
  },
  "type unions, nullable and free objects": {
    type: "object",
    properties: {
      id: { type: ["string", "integer"] },
      note: { type: "string", nullable: true },
      meta: { type: "object", additionalProperties: { type: "boolean" } },
      anything: true,
    },
    required: ["id", "meta"],
  },
  "bounded strings (code points, escapes and multi-byte UTF-8 counted as one)": {
    type: "object",
    properties: {
      code: { type: "string", minLength: 2, maxLength: 4 },
      empty: { type: "string", maxLength: 0 },
      words: { type: "array", items: { type: "string", minLength: 1, maxLength: 2 }, minItems: 1 },
    },
    required: ["code", "empty", "words"],
  },
  "bounded numbers (inclusive, exclusive, one-sided, zod's safe-integer bounds)": {
    type: "object",
    properties: {
      a: { type: "integer", minimum: -5, maximum: 12 },
      b: { type: "number", minimum: 0, maximum: 1 },
      c: { type: "number", exclusiveMinimum: -2.5, exclusiveMaximum: 3 },
      d: { type: "integer", minimum: 100 },
      e: { type: "integer", maximum: -7 },
      f: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 },
      g: { type: "number", minimum: -1, exclusiveMaximum: 0 },
    },
    required: ["a", "b", "c", "d", "e", "f", "g"],
  },
  "a top-level enum of mixed values": { enum: ["a", 1, null, true, { b: [1] }] },
  // pydantic's constr(pattern=…) and zod's .regex() write `pattern`: an ECMA-262 search, anchored
  // or not.
  "string patterns (anchored, searched, escapes in the content, non-ASCII)": {
    type: "object",
    properties: {
      sku: { type: "string", pattern: "^[A-Z]{3}-\\d{3}$" },
      slug: { type: "string", pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$" },
      note: { type: "string", pattern: "ok|fine" },
      email: { type: "string", pattern: "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$" },
      quoted: { type: "string", pattern: '^"[^"\\n]*"\\n?$', minLength: 2 },
      euro: { type: "string", pattern: "^\\d+(,\\d{2})? €$" },
    },
    required: ["sku", "slug", "note", "email", "quoted", "euro"],
  },
  // A pattern with length bounds: no character is taken that would leave the pattern unable to
  // match within the length left (a string stuck open, neither continuing nor closing).
  "string patterns under length bounds (never stranded)": {
    type: "object",
    properties: {
      email: { type: "string", pattern: "^[a-z]+@[a-z]+\\.[a-z]{2,}$", maxLength: 8 },
      code: { type: "string", pattern: "^(a|bbbbb|c+)$", minLength: 3 },
      word: { type: "string", pattern: "^[a-z]+(-[a-z]+)*$", minLength: 4, maxLength: 6 },
      wide: { type: "string", pattern: "^[é漢😀]+x\\n?$", maxLength: 3 },
      tail: { type: "string", pattern: "^\\w*(abc|z)$", maxLength: 4 },
    },
    required: ["email", "code", "word", "wide", "tail"],
  },
} satisfies Record<string, object>;

/**
 * The first byte of a shortest way from inside a string to outside it (breadth first, states by
 * key).
 */
function towardClose(states: readonly Stack[]): number | undefined {
  const closes = (from: readonly Stack[]) => from.some((stack) => stack.frame.t !== "string");
  const seen = new Set([stateKey(states)]);
  let frontier: Array<[readonly Stack[], number]> = [[states, -1]];
  for (let depth = 0; depth < 16 && frontier.length > 0; depth += 1) {
    const next: Array<[readonly Stack[], number]> = [];
    for (const [from, first] of frontier) {
      for (let byte = 0; byte < 256; byte += 1) {
        const to = from.flatMap((stack) => step(stack, byte));
        if (to.length === 0) continue;
        const key = stateKey(to);
        if (seen.has(key)) continue;
        seen.add(key);
        const head = first === -1 ? byte : first;
        if (closes(to)) return head;
        next.push([to, head]);
      }
    }
    frontier = next;
  }
  return undefined;
}

/**
 * A random walk through what the automaton allows, closing values once it has gone on long enough.
 */
function generate(shape: Shape, rng: Prng): Uint8Array {
  const out: number[] = [];
  let states = start(shape);
  while (out.length < 20000) {
    if (states.some(canEnd) && (out.length > 40 || rng.next() < 0.3)) return Uint8Array.from(out);
    const allowed: Array<[number, readonly Stack[]]> = [];
    for (let byte = 0; byte < 256; byte += 1) {
      const next = states.flatMap((stack) => step(stack, byte));
      if (next.length > 0) allowed.push([byte, next]);
    }
    // a closed value: only the end may follow
    if (allowed.length === 0 && states.some(canEnd)) return Uint8Array.from(out);
    expect(allowed.length, `dead end after ${show(out)}`).toBeGreaterThan(0);
    // Inside a string only its quote closes (a } or ] there is content).
    const inString = states.every((stack) => stack.frame.t === "string");
    const closing = allowed.filter(
      ([byte]) => out.length > 40 && (inString ? [0x22] : [0x22, 0x7d, 0x5d]).includes(byte),
    );
    // Long enough and a string that cannot close yet (its pattern still owes characters): head for
    // the nearest way out of it.
    const toward =
      out.length > 40 && inString && closing.length === 0 ? towardClose(states) : undefined;
    const pool =
      closing.length > 0
        ? closing
        : toward !== undefined
          ? allowed.filter(([byte]) => byte === toward)
          : allowed;
    const [byte, next] = pool[Math.floor(rng.next() * pool.length)]!;
    out.push(byte);
    states = next;
  }
  throw new Error("the walk did not end");
}

describe("JSON Schema → automaton", () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: 300 random outputs all validate (Ajv), and valid instances are taken`, () => {
      const shape = compileSchema(schema);
      const validate = ajv.compile(schema as object);
      const rng = createPrng(name.length);
      for (let n = 0; n < 300; n += 1) {
        const text = strictUtf8.decode(generate(shape, rng));
        const valid = validate(JSON.parse(text));
        expect(valid, `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    });
  }

  it(
    "a pattern is matched against the string's content, " +
      "escapes decoded: taken and refused as Ajv decides",
    () => {
      const schema =
        SCHEMAS["string patterns (anchored, searched, escapes in the content, non-ASCII)"];
      const shape = compileSchema(schema);
      const validate = ajv.compile(schema);
      const good = {
        sku: "ABC-123",
        slug: "a-b2",
        note: "is ok",
        email: "a@b.io",
        quoted: '"hi"',
        euro: "12,50 €",
      };
      const texts = [
        good,
        { ...good, quoted: '"hi"\n' },
        { ...good, note: "all fine here" },
        { ...good, sku: "ABC-1234" },
        { ...good, sku: "abc-123" },
        { ...good, slug: "a--b" },
        { ...good, note: "nothing" },
        { ...good, email: "a b@c.io" },
        { ...good, quoted: '"h"i"' },
        { ...good, euro: "12,5 €" },
        { ...good, euro: "12 $" },
      ].map((value) => JSON.stringify(value));
      const verdicts = texts.map((text) => [
        accepts(shape, utf8.encode(text)),
        validate(JSON.parse(text)),
      ]);
      expect(verdicts.map(([ours]) => ours)).toEqual(verdicts.map(([, ajvs]) => ajvs));
      expect(verdicts.filter(([ours]) => ours).length).toBe(3);
      // A \u escape is not taken where a pattern (or a length bound) reads the string, even for a
      // valid content.
      expect(accepts(shape, utf8.encode(JSON.stringify(good).replace("ABC", "\\u0041BC")))).toBe(
        false,
      );
    },
  );

  it("takes valid instances written in declared order, and refuses invalid ones", () => {
    const shape = compileSchema(SCHEMAS["pydantic model with $defs, enums and Optional"]);
    const ok = [
      '{"name":"Ann","age":31,"color":"red"}',
      '{"name":"","age":-2,"color":"blue",' +
        '"address":{"street":"Main","zip":12345},"tags":["a","b"]}',
      '{"name":"x","age":0,"color":"green","address":null}',
    ];
    const bad = [
      '{"age":31,"name":"Ann","color":"red"}', // out of declared order
      '{"name":"Ann","age":31}', // a required property missing
      '{"name":"Ann","age":31.5,"color":"red"}', // not an integer
      '{"name":"Ann","age":31,"color":"pink"}', // not in the enum
      '{"name":"Ann","age":31,"color":"red","extra":1}', // undeclared
      '{"name":"Ann","age":31,"color":"red","tags":["a","b","c","d"]}', // above maxItems
    ];
    expect(ok.map((text) => accepts(shape, utf8.encode(text)))).toEqual(ok.map(() => true));
    expect(bad.map((text) => accepts(shape, utf8.encode(text)))).toEqual(bad.map(() => false));
  });

  it("counts a string's length in code points, as Ajv does", () => {
    const shape = compileSchema({ type: "string", minLength: 2, maxLength: 2 });
    const texts = ['"ab"', '"é😀"', '"\\n\\t"', '"a"', '"abc"', '"\\u0041b"'];
    expect(texts.map((text) => accepts(shape, utf8.encode(text)))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    const validate = ajv.compile({ type: "string", minLength: 2, maxLength: 2 });
    expect(texts.slice(0, 5).map((text) => validate(JSON.parse(text)))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it(
    "keeps a number's range exactly: every whole number from " +
      "-300 to 300, and 3,000 random decimals, against Ajv",
    () => {
      const schemas = [
        { type: "integer", minimum: -17, maximum: 123 },
        { type: "integer", exclusiveMinimum: -17, exclusiveMaximum: 123 },
        { type: "number", minimum: -2.5, maximum: 7.25 },
        { type: "number", exclusiveMinimum: 0, maximum: 1 },
        { type: "integer", minimum: 5 },
        { type: "number", maximum: -0.5 },
      ];
      const rng = createPrng(21);
      for (const schema of schemas) {
        const shape = compileSchema(schema);
        const validate = ajv.compile(schema);
        for (let n = -300; n <= 300; n += 1)
          expect(accepts(shape, utf8.encode(String(n))), `${n} in ${JSON.stringify(schema)}`).toBe(
            validate(n),
          );
        for (let n = 0; n < 500; n += 1) {
          const text =
            `${rng.next() < 0.5 ? "-" : ""}${Math.floor(rng.next() * 10)}` +
            `.${Math.floor(rng.next() * 1000)}`;
          // Sound: whatever is taken validates (a fraction is written only where none can leave the
          // range).
          if (accepts(shape, utf8.encode(text)))
            expect(validate(JSON.parse(text)), `${text} in ${JSON.stringify(schema)}`).toBe(true);
        }
      }
      // A fraction is taken where every one stays in the range, and no exponent within a range.
      const unit = compileSchema({ type: "number", minimum: 0, maximum: 1 });
      expect(
        ["0.5", "0.999", "1", "1.0", "-0.0", "1e0"].map((text) => accepts(unit, utf8.encode(text))),
      ).toEqual([true, true, true, false, false, false]);
      // zod's int() bounds (±MAX_SAFE_INTEGER), exactly at the edge.
      const safe = compileSchema({
        type: "integer",
        minimum: -9007199254740991,
        maximum: 9007199254740991,
      });
      expect(
        [
          "9007199254740991",
          "9007199254740992",
          "-9007199254740991",
          "-9007199254740992",
          "90071992547409910",
        ].map((text) => accepts(safe, utf8.encode(text))),
      ).toEqual([true, false, true, false, false]);
    },
  );

  it(
    "refuses a union whose options start alike " + "past the matcher's 64 open ways, when compiled",
    () => {
      const consts = { anyOf: Array.from({ length: 500 }, (_, i) => ({ const: `v${i}` })) };
      expect(() => compileSchema(consts)).toThrow(
        expect.objectContaining({
          path: "/anyOf",
          message: expect.stringContaining("500 alternatives"),
        }),
      );
      // The same values in one enum are one literal, one way open; options that start unlike pass.
      expect(() =>
        compileSchema({ enum: consts.anyOf.map((option) => option.const) }),
      ).not.toThrow();
      const unlike = { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }] };
      expect(() => compileSchema(unlike)).not.toThrow();
    },
  );

  it("refuses what it cannot enforce, naming the place in the schema", () => {
    const refused = (schema: unknown) => {
      try {
        compileSchema(schema);
      } catch (error) {
        if (error instanceof SchemaError) return [error.path, error.message];
        throw error;
      }
      return undefined;
    };
    expect(
      refused({ type: "object", properties: { code: { type: "string", format: "email" } } }),
    ).toEqual([
      "/properties/code/format",
      'the keyword "format" is not supported in structured outputs',
    ]);
    expect(refused({ type: "string", pattern: "(a)\\1" })).toEqual([
      "/pattern",
      "the regex has a backreference at position 3",
    ]);
    expect(refused({ type: "string", pattern: "^a|b$" })?.[0]).toBe("/pattern");
    // A pattern no string within the length bounds matches.
    expect(refused({ type: "string", pattern: "^a{1,3}$", minLength: 5 })).toEqual([
      "/pattern",
      "no string of 5 or more characters matches the pattern",
    ]);
    expect(refused({ type: "string", pattern: "^\\d{4}-\\d{2}$", maxLength: 6 })).toEqual([
      "/pattern",
      "no string of 0 to 6 characters matches the pattern",
    ]);
    expect(refused({ type: "integer", multipleOf: 2 })?.[0]).toBe("/multipleOf");
    expect(refused({ type: "number", minimum: 0.5, maximum: 0.7 })?.[0]).toBe("/minimum");
    expect(refused({ type: "string", minLength: 3, maxLength: 2 })?.[0]).toBe("/minLength");
    expect(refused({ $ref: "https://example.com/s.json" })?.[0]).toBe("/$ref");
    expect(refused({ type: "object", properties: {}, required: ["a"] })?.[0]).toBe("/required");
    expect(refused({ type: "strin" })?.[0]).toBe("/type");
    expect(refused({ type: "array", items: [{ type: "string" }] })?.[0]).toBe("/items");
    expect(refused(false)?.[0]).toBe("");
    // A chain of $refs counts toward the depth limit (it would otherwise recurse once per link,
    // past the stack).
    const chain: Record<string, unknown> = { A20000: { type: "string" } };
    for (let i = 0; i < 20000; i += 1) chain[`A${i}`] = { $ref: `#/$defs/A${i + 1}` };
    expect(refused({ $defs: chain, $ref: "#/$defs/A0" })?.[1]).toMatch(/deeper than 32/);
    let deep: object = { type: "string" };
    for (let i = 0; i < 40; i += 1) deep = { type: "array", items: deep };
    expect(refused(deep)?.[1]).toMatch(/deeper than 32/);
  });
});

describe("token masks over the tiny LLM's vocabulary", () => {
  const tokenizer = loadTextTokenizer(
    "tokenizer.bin",
    new Uint8Array(readFileSync("models/tiny-llm/tokenizer.bin")),
  );
  const pieces = tokenizer.tokenPieces!({ skipSpecialTokens: true })!;
  const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8")) as {
    generation: { vocabSize?: number };
  };
  const size = manifest.generation.vocabSize ?? 512;
  const trie = new VocabularyTrie(size, pieces);
  const EOS = [...Array(size).keys()].find((id) => pieces(id).length === 0)!;

  it(
    "the trie's (cached) mask equals trying every id's " +
      "bytes one by one, long bounded strings included",
    () => {
      const long = {
        type: "object",
        properties: {
          s: { type: "string", minLength: 20, maxLength: 40 },
          t: { type: "string", maxLength: 3 },
        },
        required: ["s", "t"],
      };
      // A pattern that owes 20 characters at its end under a bound: the length left decides which
      // tokens fit long before the bound is near.
      const owing = {
        type: "object",
        properties: { p: { type: "string", pattern: "^[a-z ]*x{20}$", maxLength: 60 } },
        required: ["p"],
      };
      for (const schema of [
        SCHEMAS["pydantic model with $defs, enums and Optional"],
        long,
        owing,
      ]) {
        const shape = shapeOf({ json: schema });
        const rng = createPrng(3);
        for (let walk = 0; walk < 3; walk += 1) {
          const matcher = new TokenMatcher(shape, trie, pieces);
          let states = start(shape);
          for (let n = 0; n < 80 && !matcher.complete; n += 1) {
            const mask = matcher.allowed([EOS]);
            const brute = Array.from({ length: size }, (_, id) =>
              pieces(id).length > 0 && VocabularyTrie.advance(states, pieces(id)).length > 0
                ? 1
                : 0,
            );
            expect([...mask].map((bit, id) => (id === EOS ? 0 : bit))).toEqual(brute);
            const allowed = [...mask.keys()].filter((id) => mask[id] === 1 && id !== EOS);
            const id = allowed[Math.floor(rng.next() * allowed.length)]!;
            expect(matcher.accept(id)).toBe(true);
            states = VocabularyTrie.advance(states, pieces(id));
          }
        }
      }
    },
  );

  it(
    "masks are cached by state: a state met again gets the " +
      "same mask, and a cache of one mask still answers right",
    () => {
      const small = new VocabularyTrie(size, pieces, size); // room for one mask
      const shape = shapeOf({ json: SCHEMAS["pydantic model with $defs, enums and Optional"] });
      const [cached, uncached] = [
        new TokenMatcher(shape, trie, pieces),
        new TokenMatcher(shape, small, pieces),
      ];
      const quote = [...Array(size).keys()].find(
        (id) => pieces(id).length === 1 && pieces(id)[0] === 0x22,
      )!;
      const open = [...Array(size).keys()].find(
        (id) => pieces(id).length === 1 && pieces(id)[0] === 0x7b,
      )!;
      for (const matcher of [cached, uncached]) expect(matcher.accept(open)).toBe(true);
      expect(cached.allowed([EOS])).toBe(cached.allowed([EOS])); // the same array: a lookup
      expect([...uncached.allowed([EOS])]).toEqual([...cached.allowed([EOS])]);
      for (const matcher of [cached, uncached]) expect(matcher.accept(quote)).toBe(true);
      expect([...uncached.allowed([EOS])]).toEqual([...cached.allowed([EOS])]);
    },
  );

  it(
    "random generations under json_object and a schema " +
      "parse and validate once a stop id ends them",
    () => {
      for (const spec of [
        { json_object: true as const },
        { json: SCHEMAS["arrays with bounds, numbers, booleans, const"] },
      ]) {
        const validate = ajv.compile("json" in spec ? (spec.json as object) : { type: "object" });
        const rng = createPrng(5);
        let ended = 0;
        for (let n = 0; n < 40; n += 1) {
          const matcher = new TokenMatcher(shapeOf(spec), trie, pieces);
          const bytes: number[] = [];
          for (let steps = 0; steps < 400; steps += 1) {
            const mask = matcher.allowed([EOS]);
            if (mask[EOS] === 1 && (steps > 30 || rng.next() < 0.5)) break;
            const allowed = [...mask.keys()].filter((id) => mask[id] === 1 && id !== EOS);
            if (allowed.length === 0 && mask[EOS] === 1) break;
            expect(allowed.length).toBeGreaterThan(0);
            // Prefer short tokens late, so values close (a walk over whole tokens rarely does).
            const closing =
              steps > 30 ? allowed.filter((id) => [0x22, 0x7d, 0x5d].includes(pieces(id)[0]!)) : [];
            const pool = closing.length > 0 ? closing : allowed;
            const id = pool[Math.floor(rng.next() * pool.length)]!;
            expect(matcher.accept(id)).toBe(true);
            bytes.push(...pieces(id));
          }
          if (!matcher.complete) continue;
          ended += 1;
          const value: unknown = JSON.parse(strictUtf8.decode(Uint8Array.from(bytes)));
          expect(validate(value), JSON.stringify(value)).toBe(true);
        }
        expect(ended).toBeGreaterThan(30);
      }
    },
  );

  it(
    "a stop id is allowed only once the output " + "is complete, and alone after a closed value",
    () => {
      const matcher = new TokenMatcher(JSON_OBJECT, trie, pieces);
      expect(matcher.allowed([EOS])[EOS]).toBe(0);
      for (const byte of utf8.encode("{}")) {
        const id = [...Array(size).keys()].find(
          (candidate) => pieces(candidate).length === 1 && pieces(candidate)[0] === byte,
        )!;
        expect(matcher.accept(id)).toBe(true);
      }
      const mask = matcher.allowed([EOS]);
      expect([...mask.keys()].filter((id) => mask[id] === 1)).toEqual([EOS]);
      expect(matcher.accept([...Array(size).keys()].find((id) => pieces(id).length > 0)!)).toBe(
        false,
      );
    },
  );
});
