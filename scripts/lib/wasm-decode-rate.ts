// Tokens/s of the in-isolate decode loop (src/runtime/wasm/decode-loop.ts) over
// onnxruntime-web's WASM backend, one thread — the code the Worker runs, here in Node
// (workerd freezes timers inside the isolate). Prints one JSON line with two figures:
//   cold  the first generation after the session is created, as in a fresh isolate: V8 runs
//         onnxruntime's WASM on its baseline compiler (Liftoff) and tiers hot functions up to
//         TurboFan on background threads while it decodes;
//   warm  the median of 5 generations once `warmSeconds` of generations have run (tier-up is
//         done after ~10 s of decoding on the 2-core machine), as in an isolate that has served
//         a few requests.
// CPU is read both for the process (V8's compile and GC threads included) and for the main
// thread alone (origin/engines/thread-cpu.ts), the one that runs the isolate's JS and WASM.
//   tsx scripts/lib/wasm-decode-rate.ts <modelDir> <graph> <promptTokens> <newTokens> [warmSeconds]
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-web";
import { TextGenerationSchema } from "../../src/models/manifest";
import { createOrtRuntime } from "../../src/runtime/ort-runtime";
import { decodeLoop } from "../../src/runtime/wasm/decode-loop";
import { threadCpuClock } from "../../origin/engines/thread-cpu";

/**
 * This (main) thread's CPU in ms: the isolate's JS and WASM, without V8's compile and GC threads.
 */
const mainThreadCpuSeconds = threadCpuClock();
const mainThreadCpuMs = () => mainThreadCpuSeconds() * 1000;

const [
  dir = "models/tiny-llm",
  graphName = "decoder",
  promptArg = "16",
  newArg = "64",
  warmArg = "20",
] = process.argv.slice(2);
const manifest = TextGenerationSchema.parse(
  JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")),
);
const graph = manifest.graphs[graphName];
if (graph === undefined) throw new Error(`no graph ${graphName}`);
ort.env.wasm.numThreads = 1;
const runtime = createOrtRuntime(
  {
    kind: "wasm",
    Tensor: ort.Tensor,
    createSession: (model) =>
      ort.InferenceSession.create(model, {
        executionProviders: ["wasm"],
        graphOptimizationLevel: "all",
      }),
  },
  {
    inputs: graph.inputs,
    outputs: graph.outputs,
    loadModel: async () => new Uint8Array(readFileSync(`${dir}/${graph.file}`)),
  },
);
await runtime.load();
const loop = decodeLoop(runtime.tensors!, { ...manifest.generation, graph: graphName });
const promptIds = Array.from(
  { length: Number(promptArg) },
  (_, i) => 10 + ((i * 37) % (manifest.generation.vocabSize - 10)),
);
const sampling = { temperature: 0, topK: 0, topP: 1, minP: 0 };

const run = async (maxTokens: number) => {
  const started = performance.now();
  let firstAt = 0;
  let firstCpu = process.cpuUsage();
  let firstMain = 0;
  let tokens = 0;
  // No stop ids: always maxTokens steps.
  for await (const step of loop.generate(
    { promptIds, maxTokens, sampling, stopTokenIds: [] },
    new AbortController().signal,
  )) {
    if (tokens === 0) {
      firstAt = performance.now();
      firstCpu = process.cpuUsage();
      firstMain = mainThreadCpuMs();
    }
    tokens += step.tokenIds.length;
  }
  const decodeMs = performance.now() - firstAt;
  const cpu = process.cpuUsage(firstCpu);
  const decoded = tokens - 1;
  // CPU time as well as wall time: on a loaded machine the wall clock mostly measures the queue.
  return {
    prefillMs: firstAt - started,
    tokensPerSecond: (decoded / decodeMs) * 1000,
    tokensPerCpuSecond: (decoded / ((cpu.user + cpu.system) / 1000)) * 1000,
    tokensPerMainThreadCpuSecond: (decoded / (mainThreadCpuMs() - firstMain)) * 1000,
  };
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const newTokens = Number(newArg);
const cold = await run(newTokens);
const warmUntil = performance.now() + Number(warmArg) * 1000;
let warmups = 1;
while (performance.now() < warmUntil) {
  await run(newTokens);
  warmups += 1;
}
const warmRuns = [];
for (let i = 0; i < 5; i += 1) warmRuns.push(await run(newTokens));
const warm = Object.fromEntries(
  (
    ["prefillMs", "tokensPerSecond", "tokensPerCpuSecond", "tokensPerMainThreadCpuSecond"] as const
  ).map((key) => [key, median(warmRuns.map((r) => r[key]))]),
);
console.log(
  JSON.stringify({
    graph: graphName,
    promptTokens: promptIds.length,
    newTokens,
    cold,
    warm,
    warmupGenerations: warmups,
  }),
);
