// Tokens/s of the in-isolate decode loop (src/runtime/wasm/decode-loop.ts) over
// onnxruntime-web's WASM backend, one thread — the code the Worker runs, here in Node
// (workerd freezes timers inside the isolate). Prints one JSON line.
//   tsx scripts/lib/wasm-decode-rate.ts <modelDir> <graph> <promptTokens> <newTokens>
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-web";
import { TextGenerationSchema } from "../../src/models/manifest";
import { createOrtRuntime } from "../../src/runtime/ort-runtime";
import { decodeLoop } from "../../src/runtime/wasm/decode-loop";

const [dir = "models/tiny-llm", graphName = "decoder", promptArg = "16", newArg = "64"] = process.argv.slice(2);
const manifest = TextGenerationSchema.parse(JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")));
const graph = manifest.graphs[graphName];
if (graph === undefined) throw new Error(`no graph ${graphName}`);
ort.env.wasm.numThreads = 1;
const runtime = createOrtRuntime(
  { kind: "wasm", Tensor: ort.Tensor, createSession: (model) => ort.InferenceSession.create(model, { executionProviders: ["wasm"], graphOptimizationLevel: "all" }) },
  { inputs: graph.inputs, outputs: graph.outputs, loadModel: async () => new Uint8Array(readFileSync(`${dir}/${graph.file}`)) },
);
await runtime.load();
const loop = decodeLoop(runtime.tensors!, { ...manifest.generation, graph: graphName });
const promptIds = Array.from({ length: Number(promptArg) }, (_, i) => 10 + ((i * 37) % (manifest.generation.vocabSize - 10)));
const sampling = { temperature: 0, topK: 0, topP: 1, minP: 0 };
const run = async (maxTokens: number) => {
  const started = performance.now();
  let firstAt = 0;
  let firstCpu = process.cpuUsage();
  let tokens = 0;
  // No stop ids: always maxTokens steps.
  for await (const step of loop.generate({ promptIds, maxTokens, sampling, stopTokenIds: [] }, new AbortController().signal)) {
    if (tokens === 0) {
      firstAt = performance.now();
      firstCpu = process.cpuUsage();
    }
    tokens += step.tokenIds.length;
  }
  const cpu = process.cpuUsage(firstCpu);
  // CPU time as well as wall time: on a loaded machine the wall clock mostly measures the queue.
  return { prefillMs: firstAt - started, decodeMs: performance.now() - firstAt, decodeCpuMs: (cpu.user + cpu.system) / 1000, tokens };
};
await run(8); // warm-up
const result = await run(Number(newArg));
console.log(JSON.stringify({ graph: graphName, promptTokens: promptIds.length, ...result, tokensPerSecond: ((result.tokens - 1) / result.decodeMs) * 1000, tokensPerCpuSecond: ((result.tokens - 1) / result.decodeCpuMs) * 1000 }));
