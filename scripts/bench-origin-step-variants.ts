// One decode step of the tiny LLM, in-process, on the graph the origin serves (split attention +
// last-position logits: origin/onnx/) and on three variants tried for the many-row step at long
// context — none kept (docs/benchmarks.md, "The reference origin: LLM decoding"):
//   pre-transposed keys  the past keys fed as [rows, heads, headDim, capacity], no Transpose
//                        before q·Kᵀ (timing only: onnxruntime already fuses that Transpose
//                        into FusedMatMul(transB), so it never copied)
//   group-query attn     com.microsoft GroupQueryAttention per layer over a shared past/present
//                        buffer (the kernel writes the new column in place; each row attends
//                        over its own length) — but onnxruntime-node copies every output into a
//                        fresh ArrayBuffer after the run, the shared 50 MB present included
//   elementwise new col  the new token's score and weighted value as Mul/ReduceSum instead of
//                        1×64·64×1 and 1×1·1×64 MatMuls
// At 1 and 16 rows, context ≈16 (capacity 32) and ≈502 (capacity 512); ms wall / CPU per step,
// medians of interleaved rounds, and each variant's largest |Δ logit| against the served graph.
// Usage: npx tsx scripts/bench-origin-step-variants.ts [--rounds 5] [--runs 30]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import {
  decodeModel,
  encodeModel,
  type OnnxAttribute,
  type OnnxNode,
} from "../origin/onnx/onnx-proto";
import { LOGITS_INDEX, lastPositionLogits } from "../origin/onnx/last-logits";
import { splitAttention } from "../origin/onnx/split-attention";

const { values: options } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, runs: { type: "string", default: "30" } },
});
const [ROUNDS, RUNS] = [Number(options.rounds), Number(options.runs)];
const manifest = JSON.parse(readFileSync("models/tiny-llm/manifest.json", "utf8")) as {
  graphs: Record<string, { file: string }>;
  generation: {
    graph: string;
    layers: number;
    kvHeads: number;
    headDim: number;
    vocabSize: number;
  };
};
const { layers, kvHeads, headDim, vocabSize } = manifest.generation;
const heads = kvHeads; // multi-head (kvHeads = heads) in the shipped model
const bytes = readFileSync(`models/tiny-llm/${manifest.graphs[manifest.generation.graph]!.file}`);
const ints = (name: string, values: number[]): OnnxAttribute => ({ name, type: 7, ints: values });
const int = (name: string, value: number): OnnxAttribute => ({ name, type: 2, i: value });

function served(): Uint8Array {
  const split = splitAttention(bytes, layers);
  const last = split === null ? null : lastPositionLogits(split);
  if (last === null) throw new Error("the decoder graph does not have the exported pattern");
  return last;
}

function preTransposedKeys(): Uint8Array {
  const model = decodeModel(served());
  for (let l = 0; l < layers; l++) {
    const name = `/origin_split/${l}/past_kT`;
    model.graph.node = model.graph.node.filter((node) => node.name !== name);
    for (const node of model.graph.node)
      node.input = node.input.map((input) => (input === name ? `past_key_values.${l}.key` : input));
  }
  for (const input of model.graph.input)
    if (/^past_key_values\.\d+\.key$/.test(input.name))
      input.type = { tensorType: { elemType: 1 } };
  model.graph.valueInfo = [];
  return encodeModel(model);
}

function elementwiseNewColumn(): Uint8Array {
  const model = decodeModel(served());
  model.graph.initializer.push({
    name: "/variant/last_axis",
    dataType: 7,
    dims: [1],
    int64Data: [-1],
  });
  const byName = new Map(model.graph.node.map((node) => [node.name, node]));
  model.graph.node = model.graph.node.flatMap((node): OnnxNode[] => {
    const match = /^\/origin_split\/(\d+)\/(scores_new|out_new|new_kT)$/.exec(node.name ?? "");
    if (match === null) return [node];
    if (match[2] === "new_kT") return [];
    if (match[2] === "out_new") return [{ ...node, opType: "Mul" }];
    const newK = byName.get(`/origin_split/${match[1]}/new_kT`)!.input[0]!;
    return [
      {
        opType: "Mul",
        name: `${node.name}/mul`,
        input: [node.input[0]!, newK],
        output: [`${node.name}/mul`],
      },
      {
        opType: "ReduceSum",
        name: `${node.name}/sum`,
        input: [`${node.name}/mul`, "/variant/last_axis"],
        output: node.output,
        attribute: [int("keepdims", 1)],
      },
    ];
  });
  return encodeModel(model);
}

/**
 * GroupQueryAttention per layer (see the header); inputs seqlens_k INT32 [b] and
 * total_sequence_length INT32 [].
 */
function groupQueryAttention(): Uint8Array {
  const model = decodeModel(bytes) as ReturnType<typeof decodeModel> & {
    opsetImport?: { domain?: string; version?: number }[];
  };
  const graph = model.graph;
  const only = (name: string) => {
    const found = graph.node.filter((node) => node.input.includes(name));
    return found.length === 1 ? found[0] : undefined;
  };
  graph.initializer.push({ name: "/variant/flat", dataType: 7, dims: [3], int64Data: [0, 0, -1] });
  const added: OnnxNode[] = [];
  const replaced = new Map<string, string>();
  for (let l = 0; l < layers; l++) {
    const [pastK, pastV, presentK, presentV] = [
      `past_key_values.${l}.key`,
      `past_key_values.${l}.value`,
      `present.${l}.key`,
      `present.${l}.value`,
    ];
    const concatK = graph.node.find(
      (n) => n.opType === "Concat" && n.input[0] === pastK && n.output[0] === presentK,
    );
    const concatV = graph.node.find(
      (n) => n.opType === "Concat" && n.input[0] === pastV && n.output[0] === presentV,
    );
    const scores = concatK === undefined ? undefined : only(only(presentK)?.output[0] ?? "");
    const back = only(only(presentV)?.output[0] ?? "");
    const flat =
      back === undefined
        ? undefined
        : graph.node.find(
            (node) => node.input.includes(back.output[0]!) && node.opType === "Reshape",
          );
    if (
      concatK === undefined ||
      concatV === undefined ||
      scores === undefined ||
      flat === undefined
    )
      throw new Error(`layer ${l} does not have the exported attention`);
    const p = `/variant/${l}`;
    const toFlat = (name: string, what: string) => {
      added.push({
        opType: "Transpose",
        name: `${p}/${what}_bsnh`,
        input: [name],
        output: [`${p}/${what}_bsnh`],
        attribute: [ints("perm", [0, 2, 1, 3])],
      });
      added.push({
        opType: "Reshape",
        name: `${p}/${what}_flat`,
        input: [`${p}/${what}_bsnh`, "/variant/flat"],
        output: [`${p}/${what}_flat`],
      });
      return `${p}/${what}_flat`;
    };
    const [q, k, v] = [
      toFlat(scores.input[0]!, "q"),
      toFlat(concatK.input[1]!, "k"),
      toFlat(concatV.input[1]!, "v"),
    ];
    added.push({
      opType: "GroupQueryAttention",
      domain: "com.microsoft",
      name: `${p}/attention`,
      input: [q, k, v, pastK, pastV, "seqlens_k", "total_sequence_length"],
      output: [`${p}/attention`, presentK, presentV],
      // scale: its default 1/√headDim, the graph's
      attribute: [int("num_heads", heads), int("kv_num_heads", kvHeads)],
    });
    replaced.set(flat.output[0]!, `${p}/attention`);
    concatK.output = [`${p}/unused_k`];
    concatV.output = [`${p}/unused_v`];
  }
  for (const node of graph.node)
    node.input = node.input.map((input) => replaced.get(input) ?? input);
  graph.node.push(...added);
  // Topological order from the outputs, dropping what nothing reads.
  const producer = new Map<string, OnnxNode>();
  for (const node of graph.node) for (const output of node.output) producer.set(output, node);
  const ordered: OnnxNode[] = [];
  const seen = new Set<OnnxNode>();
  const visit = (node: OnnxNode) => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const input of node.input) {
      const from = producer.get(input);
      if (from !== undefined) visit(from);
    }
    ordered.push(node);
  };
  for (const output of graph.output) {
    const from = producer.get(output.name);
    if (from !== undefined) visit(from);
  }
  graph.node = ordered;
  const read = new Set(ordered.flatMap((node) => node.input));
  graph.input = graph.input.filter((input) => read.has(input.name));
  graph.input.push(
    {
      name: "seqlens_k",
      type: { tensorType: { elemType: 6, shape: { dim: [{ dimParam: "batch" }] } } },
    },
    { name: "total_sequence_length", type: { tensorType: { elemType: 6, shape: { dim: [] } } } },
  );
  for (const output of graph.output)
    if (output.name.startsWith("present.")) output.type = { tensorType: { elemType: 1 } };
  graph.valueInfo = [];
  model.opsetImport = [...(model.opsetImport ?? []), { domain: "com.microsoft", version: 1 }];
  const last = lastPositionLogits(encodeModel(model));
  if (last === null) throw new Error("no LM head input to gather");
  return last;
}

type Kind = "served" | "pre-transposed keys" | "group-query attn" | "elementwise new col";
const sessionOptions: ort.InferenceSession.SessionOptions = {
  executionProviders: ["cpu"],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
};
const sessions = new Map<Kind, ort.InferenceSession>([
  ["served", await ort.InferenceSession.create(served(), sessionOptions)],
  ["pre-transposed keys", await ort.InferenceSession.create(preTransposedKeys(), sessionOptions)],
  ["group-query attn", await ort.InferenceSession.create(groupQueryAttention(), sessionOptions)],
  [
    "elementwise new col",
    await ort.InferenceSession.create(elementwiseNewColumn(), sessionOptions),
  ],
]);

let state = 5;
const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;

/**
 * The feeds and bound outputs of one step of `rows` rows, each `filled` tokens into a cache of
 * `capacity` columns.
 */
function step(kind: Kind, rows: number, capacity: number, filled: number, caches: Float32Array[]) {
  const common: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor(
      "int64",
      BigInt64Array.from({ length: rows }, (_, r) => BigInt(7 + 13 * r)),
      [rows, 1],
    ),
    position_ids: new ort.Tensor("int64", new BigInt64Array(rows).fill(BigInt(filled)), [rows, 1]),
    [LOGITS_INDEX]: new ort.Tensor("int64", new BigInt64Array(rows), [rows, 1, 1]),
  };
  const fetches: Record<string, ort.Tensor> = {
    logits: new ort.Tensor("float32", new Float32Array(rows * vocabSize), [rows, 1, vocabSize]),
  };
  const names = Array.from(
    { length: layers * 2 },
    (_, i) => `${i >> 1}.${i & 1 ? "value" : "key"}`,
  );
  if (kind === "group-query attn") {
    common.seqlens_k = new ort.Tensor("int32", new Int32Array(rows).fill(filled), [rows]);
    common.total_sequence_length = new ort.Tensor("int32", Int32Array.of(filled + 1), []);
    names.forEach((name, i) => {
      // The same memory as past and present: the kernel's shared-buffer path (the cache copy is
      // this step's own).
      const cache = caches[i]!.slice();
      common[`past_key_values.${name}`] = new ort.Tensor("float32", cache, [
        rows,
        kvHeads,
        capacity,
        headDim,
      ]);
      fetches[`present.${name}`] = new ort.Tensor("float32", cache, [
        rows,
        kvHeads,
        capacity,
        headDim,
      ]);
    });
  } else {
    const width = capacity + 1;
    const mask = new BigInt64Array(rows * width);
    for (let r = 0; r < rows; r++)
      mask.fill(1n, r * width, r * width + filled).fill(1n, r * width + capacity, (r + 1) * width);
    common.attention_mask = new ort.Tensor("int64", mask, [rows, width]);
    names.forEach((name, i) => {
      const transposed = kind === "pre-transposed keys" && name.endsWith("key");
      common[`past_key_values.${name}`] = new ort.Tensor(
        "float32",
        caches[i]!,
        transposed ? [rows, kvHeads, headDim, capacity] : [rows, kvHeads, capacity, headDim],
      );
      fetches[`present.${name}`] = new ort.Tensor(
        "float32",
        new Float32Array(rows * kvHeads * headDim),
        [rows, kvHeads, 1, headDim],
      );
    });
  }
  return { feeds: common, fetches };
}

const kinds = [...sessions.keys()];
const cells = [1, 16].flatMap((rows) =>
  [
    [16, 32],
    [502, 512],
  ].map(([filled, capacity]) => ({ rows, filled: filled!, capacity: capacity! })),
);
const times = new Map<string, { wall: number; cpu: number }[]>();
const worst = new Map<string, number>();
for (let round = 0; round < ROUNDS; round++) {
  for (const { rows, filled, capacity } of cells) {
    const caches = Array.from({ length: layers * 2 }, () =>
      Float32Array.from({ length: rows * kvHeads * capacity * headDim }, random),
    );
    let reference: Float32Array | undefined;
    for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) {
      const session = sessions.get(kind)!;
      const { feeds, fetches } = step(kind, rows, capacity, filled, caches);
      const logits = (await session.run(feeds, fetches)).logits!.data as Float32Array;
      if (kind === "served") reference = logits.slice();
      else if (kind !== "pre-transposed keys" && reference !== undefined) {
        let delta = 0;
        logits.forEach((value, i) => (delta = Math.max(delta, Math.abs(value - reference![i]!))));
        worst.set(kind, Math.max(worst.get(kind) ?? 0, delta));
      }
      const [started, cpu0] = [performance.now(), process.cpuUsage()];
      for (let i = 0; i < RUNS; i++) await session.run(feeds, fetches);
      const cpu = process.cpuUsage(cpu0);
      const key = `${kind}|${rows}|${capacity}`;
      times.set(key, [
        ...(times.get(key) ?? []),
        { wall: (performance.now() - started) / RUNS, cpu: (cpu.user + cpu.system) / 1000 / RUNS },
      ]);
    }
  }
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  "decode step, in-process, onnxruntime-node CPU, 1 intra-op thread (ms " +
    `wall / CPU, medians of ${ROUNDS} interleaved rounds × ${RUNS} runs)`,
);
console.log(
  `${"".padEnd(22)}` +
    `${cells
      .map(({ rows, filled }) => `${rows} row${rows > 1 ? "s" : ""} @ ${filled}`.padStart(16))
      .join("")}` +
    "   max |Δ logit| vs served",
);
for (const kind of kinds) {
  const row = cells.map(({ rows, capacity }) => {
    const cell = times.get(`${kind}|${rows}|${capacity}`)!;
    return (
      `${median(cell.map((t) => t.wall)).toFixed(2)}` +
      `/${median(cell.map((t) => t.cpu)).toFixed(2)}`
    ).padStart(16);
  });
  const delta =
    kind === "served"
      ? "—"
      : kind === "pre-transposed keys"
        ? "(timing only)"
        : worst.get(kind)!.toExponential(1);
  console.log(`${kind.padEnd(22)}${row.join("")}   ${delta}`);
}
