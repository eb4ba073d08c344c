// The shipped tiny LLM's files, run for real with onnxruntime-node: the FP32 graph with a KV
// cache (prefill, then one token per step feeding present.* back as past_key_values.*)
// reproduces PyTorch's greedy continuations saved by scripts/llm/export.py, a left-padded
// batch gives each row's ids alone, and the manifest's hashes and INT8 figure hold.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import tokenizers from "tokenizers";
import { compactTokenizer } from "../../../scripts/tokenizers/sources.mjs";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadSplits } from "../../../scripts/llm/corpus.mjs";

const dir = "models/tiny-llm";
const TensorSpec = z.object({
  name: z.string(),
  datatype: z.string(),
  shape: z.array(z.number().int()),
});
const Graph = z.object({
  file: z.string(),
  sha256: z.string(),
  bytes: z.number().int(),
  inputs: z.array(TensorSpec),
  outputs: z.array(TensorSpec),
});
const Manifest = z.object({
  task: z.literal("text-generation"),
  runtime: z.literal("origin"),
  protocol: z.literal("vllm-completions"),
  graphs: z.object({ decoder: Graph, "decoder-fp32": Graph }),
  // The edge loads the compact form; its source tokenizer.json is the Rust reference.
  tokenizer: z.object({
    file: z.literal("tokenizer.bin"),
    sha256: z.string(),
    bytes: z.number().int(),
    source: z.object({ file: z.string(), sha256: z.string() }),
  }),
  generation: z.object({
    graph: z.string(),
    contextLength: z.number().int(),
    vocabSize: z.number().int(),
    layers: z.number().int(),
    kvHeads: z.number().int(),
    headDim: z.number().int(),
    bosTokenId: z.number().int(),
    eosTokenId: z.number().int(),
    stopTokenIds: z.array(z.number().int()),
    addBosToken: z.boolean(),
    chatTemplate: z.string(),
  }),
  evaluation: z.object({
    perplexity: z.object({ fp32: z.number(), int8: z.number(), kneserNeyTrigram: z.number() }),
    int8Check: z.object({
      documents: z.number().int(),
      tokens: z.number().int(),
      perplexity: z.number(),
    }),
  }),
});
const Fixture = z.object({
  modelSha256: z.string(),
  newTokens: z.number().int(),
  logitsTolerance: z.number(),
  prompts: z.array(
    z.object({
      document: z.string(),
      promptIds: z.array(z.number().int()),
      greedyIds: z.array(z.number().int()),
    }),
  ),
  logitsCheckpoints: z.array(
    z.object({
      prompt: z.number().int(),
      first16: z.array(z.number()),
      topIds: z.array(z.number().int()),
      topLogits: z.array(z.number()),
    }),
  ),
});
const manifest = Manifest.parse(JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")));
const fixture = Fixture.parse(
  JSON.parse(readFileSync("test/fixtures/tiny-llm/greedy.json", "utf8")),
);
const gen = manifest.generation;
/**
 * INT8 activations are quantized per batch at run time; same runtime, same inputs: tiny drift at
 * most.
 */
const INT8_PERPLEXITY_TOLERANCE = 0.005;

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
type Ort = typeof ort | typeof ortWeb;
type Tensor = ort.Tensor | ortWeb.Tensor;
type Session = { run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> };
let runtime: Ort = ort;
const int64 = (values: readonly number[], dims: number[]): Tensor =>
  new runtime.Tensor("int64", BigInt64Array.from(values, BigInt), dims);

function emptyPast(batch: number): Record<string, Tensor> {
  const past: Record<string, Tensor> = {};
  for (let l = 0; l < gen.layers; l += 1) {
    for (const kind of ["key", "value"]) {
      past[`past_key_values.${l}.${kind}`] = new runtime.Tensor("float32", new Float32Array(0), [
        batch,
        gen.kvHeads,
        0,
        gen.headDim,
      ]);
    }
  }
  return past;
}

function logitsOf(out: Record<string, Tensor>): Float32Array {
  const logits = out.logits;
  if (!logits || !(logits.data instanceof Float32Array)) throw new Error("no FP32 logits");
  return logits.data;
}

/** Argmax over one row of logits; ties go to the lowest id. */
function argmax(data: Float32Array, offset: number): number {
  let best = 0;
  for (let i = 1; i < gen.vocabSize; i += 1) if (data[offset + i]! > data[offset + best]!) best = i;
  return best;
}

/**
 * Greedy decoding of left-padded rows with a KV cache; returns new ids and each row's prefill
 * logits.
 */
async function greedy(session: Session, prompts: number[][], newTokens: number) {
  const batch = prompts.length;
  const width = Math.max(...prompts.map((p) => p.length));
  const pad = (p: number[], value: number) => new Array<number>(width - p.length).fill(value);
  const mask = prompts.map((p) => [...pad(p, 0), ...p.map(() => 1)]);
  let feeds: Record<string, Tensor> = {
    input_ids: int64(
      prompts.flatMap((p) => [...pad(p, 0), ...p]),
      [batch, width],
    ),
    attention_mask: int64(mask.flat(), [batch, width]),
    position_ids: int64(
      prompts.flatMap((p) => [...pad(p, 0), ...p.map((_, i) => i)]),
      [batch, width],
    ),
    ...emptyPast(batch),
  };
  const ids = prompts.map((): number[] => []);
  const prefill: Float32Array[] = [];
  for (let step = 0; step < newTokens; step += 1) {
    const out = await session.run(feeds);
    const data = logitsOf(out);
    const seq = step === 0 ? width : 1;
    const chosen = prompts.map((_, row) => {
      const offset = (row * seq + seq - 1) * gen.vocabSize;
      if (step === 0) prefill.push(data.slice(offset, offset + gen.vocabSize));
      return argmax(data, offset);
    });
    chosen.forEach((id, row) => ids[row]!.push(id));
    mask.forEach((m) => m.push(1));
    const past: Record<string, Tensor> = {};
    for (let l = 0; l < gen.layers; l += 1) {
      for (const kind of ["key", "value"]) {
        const present = out[`present.${l}.${kind}`];
        if (!present) throw new Error(`missing present.${l}.${kind}`);
        past[`past_key_values.${l}.${kind}`] = present;
      }
    }
    feeds = {
      input_ids: int64(chosen, [batch, 1]),
      attention_mask: int64(mask.flat(), [batch, mask[0]!.length]),
      position_ids: int64(
        prompts.map((p) => p.length + step),
        [batch, 1],
      ),
      ...past,
    };
  }
  return { ids, prefill };
}

describe("tiny LLM (models/tiny-llm)", () => {
  let fp32: ort.InferenceSession;
  beforeAll(async () => {
    fp32 = await ort.InferenceSession.create(`${dir}/${manifest.graphs["decoder-fp32"].file}`, {
      intraOpNumThreads: 1,
    });
  });

  it(
    "files match the manifest's sha256 and sizes; " + "the fixtures were made from this FP32 graph",
    () => {
      for (const graph of Object.values(manifest.graphs)) {
        expect(sha256(`${dir}/${graph.file}`)).toBe(graph.sha256);
        expect(readFileSync(`${dir}/${graph.file}`).length).toBe(graph.bytes);
      }
      expect(sha256(`${dir}/${manifest.tokenizer.file}`)).toBe(manifest.tokenizer.sha256);
      expect(readFileSync(`${dir}/${manifest.tokenizer.file}`).length).toBe(
        manifest.tokenizer.bytes,
      );
      expect(sha256(`${dir}/${manifest.tokenizer.source.file}`)).toBe(
        manifest.tokenizer.source.sha256,
      );
      // The shipped compact form is the source compiled by today's compiler (the parity tests check
      // that one).
      expect(
        Buffer.compare(
          readFileSync(`${dir}/${manifest.tokenizer.file}`),
          Buffer.from(compactTokenizer(dir)),
        ),
      ).toBe(0);
      expect(fixture.modelSha256).toBe(manifest.graphs["decoder-fp32"].sha256);
      expect(fp32.inputNames.slice(0, 3)).toEqual(["input_ids", "attention_mask", "position_ids"]);
      expect(fp32.inputNames).toHaveLength(3 + 2 * gen.layers);
      expect(fp32.outputNames).toEqual(manifest.graphs["decoder-fp32"].outputs.map((o) => o.name));
    },
  );

  it(
    "the KV-cache loop on model.fp32.onnx gives " + "PyTorch's greedy 32 ids on all 20 prompts",
    async () => {
      expect(fixture.prompts).toHaveLength(20);
      for (const prompt of fixture.prompts) {
        const { ids } = await greedy(fp32, [prompt.promptIds], fixture.newTokens);
        expect(ids[0], prompt.document).toEqual(prompt.greedyIds);
      }
    },
  );

  it("prefill logits match PyTorch's checkpoints", async () => {
    for (const checkpoint of fixture.logitsCheckpoints) {
      const { prefill } = await greedy(fp32, [fixture.prompts[checkpoint.prompt]!.promptIds], 1);
      const logits = prefill[0]!;
      checkpoint.first16.forEach((value, i) =>
        expect(Math.abs(logits[i]! - value)).toBeLessThanOrEqual(fixture.logitsTolerance),
      );
      checkpoint.topIds.forEach((id, i) =>
        expect(Math.abs(logits[id]! - checkpoint.topLogits[i]!)).toBeLessThanOrEqual(
          fixture.logitsTolerance,
        ),
      );
    }
  });

  it("a left-padded batch of 2 gives the same ids as each prompt alone", async () => {
    const pairs = [
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
    ] as const;
    for (const [a, b] of pairs) {
      const first = fixture.prompts[a]!;
      const second = fixture.prompts[b]!;
      expect(first.promptIds.length).not.toBe(second.promptIds.length);
      const { ids } = await greedy(fp32, [first.promptIds, second.promptIds], fixture.newTokens);
      expect(ids[0]).toEqual(first.greedyIds);
      expect(ids[1]).toEqual(second.greedyIds);
    }
  });

  it("onnxruntime-web (WASM) runs both graphs; on FP32 its greedy ids are PyTorch's", async () => {
    ortWeb.env.wasm.numThreads = 1;
    runtime = ortWeb;
    try {
      for (const [name, graph] of Object.entries(manifest.graphs)) {
        const session = await ortWeb.InferenceSession.create(readFileSync(`${dir}/${graph.file}`));
        for (const prompt of fixture.prompts.slice(0, 3)) {
          const { ids } = await greedy(session, [prompt.promptIds], fixture.newTokens);
          if (name === "decoder-fp32") expect(ids[0], prompt.document).toEqual(prompt.greedyIds);
          else expect(ids[0]).toHaveLength(fixture.newTokens);
        }
      }
    } finally {
      runtime = ort;
    }
  });

  it(
    "INT8 perplexity on held-out text is the manifest's " +
      `(within ${INT8_PERPLEXITY_TOLERANCE * 100} %)`,
    async () => {
      const check = manifest.evaluation.int8Check;
      const int8 = await ort.InferenceSession.create(`${dir}/${manifest.graphs.decoder.file}`, {
        intraOpNumThreads: 1,
      });
      const rust = tokenizers.Tokenizer.fromFile(`${dir}/${manifest.tokenizer.source.file}`);
      let nll = 0;
      let tokens = 0;
      for (const doc of loadSplits().test.slice(0, check.documents)) {
        const ids = [
          ...(await rust.encode(doc.text, null, { addSpecialTokens: true })).getIds(),
          gen.eosTokenId,
        ].slice(0, gen.contextLength);
        expect(ids[0]).toBe(gen.bosTokenId);
        const seq = ids.length - 1;
        const out = await int8.run({
          input_ids: int64(ids.slice(0, seq), [1, seq]),
          attention_mask: int64(new Array<number>(seq).fill(1), [1, seq]),
          position_ids: int64(
            ids.slice(0, seq).map((_, i) => i),
            [1, seq],
          ),
          ...emptyPast(1),
        });
        const logits = logitsOf(out);
        for (let k = 0; k < seq; k += 1) {
          const row = logits.subarray(k * gen.vocabSize, (k + 1) * gen.vocabSize);
          const max = Math.max(...row);
          const logSum = max + Math.log(row.reduce((sum, v) => sum + Math.exp(v - max), 0));
          nll += logSum - row[ids[k + 1]!]!;
          tokens += 1;
        }
      }
      expect(tokens).toBe(check.tokens);
      const perplexity = Math.exp(nll / tokens);
      expect(Math.abs(perplexity / check.perplexity - 1)).toBeLessThanOrEqual(
        INT8_PERPLEXITY_TOLERANCE,
      );
      expect(manifest.evaluation.perplexity.int8).toBeLessThanOrEqual(
        manifest.evaluation.perplexity.kneserNeyTrigram * 0.9,
      );
    },
  );
});
