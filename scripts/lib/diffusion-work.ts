// The image pipeline's pieces timed in Node (workerd freezes timers inside the isolate),
// on the code the Worker runs: the edge's per-image work (seeded noise, one preview —
// linear factors, upscale, PNG — and the final PNG, at 28 × 28 and 224 × 224), and the
// whole loop for one image over onnxruntime-web WASM (one thread: the in-isolate runtime)
// beside onnxruntime-node (one thread: the reference origin's engine). Prints one JSON line.
// Each loop is timed warm: after `warmSeconds` of loops, since V8 tiers onnxruntime's WASM up
// to TurboFan on background threads for the first ~10 s of work (the first loop is reported
// apart as `coldMs`); CPU for the process and for its main thread alone.
//   tsx scripts/lib/diffusion-work.ts [modelDir] [steps] [runs] [warmSeconds]
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web";
import {
  diffusionGraphs,
  diffusionLoop,
  requestNoise,
  sizeOf,
  type RunGraph,
} from "../../src/generation/diffusion";
import { encodePng } from "../../src/images/png";
import { TextToImageSchema } from "../../src/models/manifest";
import { createOrtRuntime, type OrtEngine } from "../../src/runtime/ort-runtime";
import { previewPixels, toBytes, upscale } from "../../src/tasks/text-to-image/raster";
import { threadCpuClock } from "../../origin/engines/thread-cpu";

/**
 * This (main) thread's CPU in ms: the isolate's JS and WASM, without V8's compile and GC threads.
 */
const mainThreadCpuSeconds = threadCpuClock();
const mainThreadCpuMs = () => mainThreadCpuSeconds() * 1000;

const [dir = "models/digit-diffusion", stepsArg = "20", runsArg = "5", warmArg = "15"] =
  process.argv.slice(2);
const manifest = TextToImageSchema.parse(JSON.parse(readFileSync(`${dir}/manifest.json`, "utf8")));
const { defaults, ...spec } = manifest.diffusion;
const latentSize = sizeOf(spec.latentShape);
const [channels, lh, lw] = spec.latentShape;
const [, height, width] = spec.imageShape;

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
function timeEach(reps: number, work: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < reps; i += 1) {
    const started = performance.now();
    work();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

const latent = requestNoise(1, 1, latentSize);
const image = new Float32Array(height * width).map((_, i) => (i % 7) / 7);
const edge = {
  noiseMs: timeEach(2000, () => requestNoise(12345, 1, latentSize)),
  previewMs28: timeEach(2000, () =>
    encodePng(
      upscale(
        toBytes(previewPixels(latent, channels, lh, lw, spec.preview.factors, spec.preview.bias)),
        lh,
        lw,
        28,
      ),
      28,
      28,
    ),
  ),
  previewMs224: timeEach(500, () =>
    encodePng(
      upscale(
        toBytes(previewPixels(latent, channels, lh, lw, spec.preview.factors, spec.preview.bias)),
        lh,
        lw,
        224,
      ),
      224,
      224,
    ),
  ),
  pngMs28: timeEach(2000, () => encodePng(upscale(toBytes(image), height, width, 28), 28, 28)),
  pngMs224: timeEach(500, () => encodePng(upscale(toBytes(image), height, width, 224), 224, 224)),
};

ortWeb.env.wasm.numThreads = 1;
// onnxruntime-web's linear memory, caught as its instance is created (as src/runtime/wasm/ort.ts
// does in the Worker).
let wasmMemory: WebAssembly.Memory | undefined;
const instantiate = WebAssembly.instantiate;
const capture = async (source: never, imports?: WebAssembly.Imports) => {
  const result: unknown = await instantiate(source, imports);
  const instance =
    result instanceof WebAssembly.Instance
      ? result
      : (result as { instance: WebAssembly.Instance }).instance;
  const candidates = [
    ...Object.values(instance.exports),
    ...Object.values(imports ?? {}).flatMap((module) => Object.values(module)),
  ];
  wasmMemory ??= candidates.find(
    (value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory,
  );
  return result;
};
WebAssembly.instantiate = capture as typeof WebAssembly.instantiate;
// The heap is read after a full collection, so that it counts what the pipeline holds, not
// garbage that the next collection would take (V8's gc(), exposed at run time).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
const retainedHeap = () => {
  collectGarbage();
  return process.memoryUsage().heapUsed;
};
const heapBefore = retainedHeap();
const engines: Record<string, OrtEngine> = {
  wasm: {
    kind: "wasm",
    Tensor: ortWeb.Tensor,
    createSession: (model) =>
      ortWeb.InferenceSession.create(model, {
        executionProviders: ["wasm"],
        graphOptimizationLevel: "all",
      }),
  },
  native: {
    kind: "native",
    Tensor: ortWeb.Tensor,
    // onnxruntime-node's session and tensor share onnxruntime-common's interface with web's.
    createSession: (model) =>
      ortNode.InferenceSession.create(model, {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: "all",
      }) as unknown as Promise<ortWeb.InferenceSession>,
  },
};

/** `afterFirst` runs once the pipeline is loaded and has run one loop (where memory is read). */
async function loopMs(
  engine: OrtEngine,
  afterFirst?: () => void,
): Promise<{
  coldMs: number;
  loopMs: number;
  loopCpuMs: number;
  loopMainThreadCpuMs: number;
  warmupLoops: number;
}> {
  const runner = async (name: "text_encoder" | "unet" | "vae_decoder"): Promise<RunGraph> => {
    const graph = manifest.graphs[name]!;
    const runtime = createOrtRuntime(
      engine.kind === "native"
        ? { ...engine, Tensor: ortNode.Tensor as unknown as typeof ortWeb.Tensor }
        : engine,
      {
        inputs: graph.inputs,
        outputs: graph.outputs,
        loadModel: async () => new Uint8Array(readFileSync(`${dir}/${graph.file}`)),
      },
    );
    await runtime.load();
    return async (feeds) => (await runtime.tensors!.run(feeds)).outputs;
  };
  const graphs = diffusionGraphs(spec, {
    textEncoder: await runner("text_encoder"),
    unet: await runner("unet"),
    vaeDecoder: await runner("vae_decoder"),
  });
  const ids = new BigInt64Array(spec.promptLength).fill(BigInt(spec.padTokenId));
  ids.set([65n, 280n, 287n]);
  const once = async (seed: number) => {
    const request = {
      inputIds: ids,
      noise: requestNoise(seed, 1, latentSize),
      n: 1,
      params: {
        steps: Number(stepsArg),
        guidanceScale: defaults.guidanceScale,
        scheduler: defaults.scheduler,
      },
      previewEvery: 1,
    };
    for await (const _ of diffusionLoop(graphs, spec, request, new AbortController().signal))
      void _;
  };
  const coldStarted = performance.now();
  await once(0);
  const coldMs = performance.now() - coldStarted;
  afterFirst?.();
  let warmupLoops = 1;
  for (
    const until = performance.now() + Number(warmArg) * 1000;
    performance.now() < until;
    warmupLoops += 1
  )
    await once(warmupLoops);
  const wall: number[] = [];
  const cpu: number[] = [];
  const mainThread: number[] = [];
  for (let i = 0; i < Number(runsArg); i += 1) {
    const [started, startedCpu, startedMain] = [
      performance.now(),
      process.cpuUsage(),
      mainThreadCpuMs(),
    ];
    await once(i + 1);
    const used = process.cpuUsage(startedCpu);
    wall.push(performance.now() - started);
    cpu.push((used.user + used.system) / 1000);
    mainThread.push(mainThreadCpuMs() - startedMain);
  }
  return {
    coldMs,
    loopMs: median(wall),
    loopCpuMs: median(cpu),
    loopMainThreadCpuMs: median(mainThread),
    warmupLoops,
  };
}

let memory: { wasmLinearMB: number; heapDeltaMB: number } | undefined;
const wasm = await loopMs(
  engines.wasm!,
  () =>
    (memory = {
      wasmLinearMB: (wasmMemory?.buffer.byteLength ?? NaN) / 2 ** 20,
      heapDeltaMB: (retainedHeap() - heapBefore) / 2 ** 20,
    }),
);
const native = await loopMs(engines.native!);
console.log(JSON.stringify({ steps: Number(stepsArg), edge, wasm, native, memory }));
