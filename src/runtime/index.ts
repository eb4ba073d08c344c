// Picks each model's runtime from its manifest — where it runs and, on an origin, which
// protocol reaches it — so moving a model is a manifest change, not code.
import { builtAhead, primaryGraph, primaryGraphName, type Manifest } from "../models/manifest";
import type { InferenceRuntime } from "./runtime";
import { createOipRuntime } from "./origin/oip-runtime";
import { NO_ORIGIN, type OriginConfig } from "./origin/origin-config";
import { createVllmRuntime } from "./origin/vllm-runtime";
import { createBreakers, type Breakers } from "./origin/circuit-breaker";
import { createFleet, type Fleet } from "./origin/replica-pool";
import { createTensorStreamRuntime } from "./origin/tensor-stream-runtime";
import { decodeLoop } from "./wasm/decode-loop";
import { createDiffusionLoopRuntime } from "./wasm/diffusion-loop";
import { createWasmRuntime } from "./wasm/wasm-runtime";

export type * from "./runtime";
export { NO_ORIGIN, type OriginConfig, type Replica } from "./origin/origin-config";
export { wasmMemoryBytes, wasmSessionsCreated } from "./wasm/ort";
export { batchCounts, dynamicBatcher } from "./dynamic-batcher";
export { canaryMetricLines, canaryMonitor } from "./origin/canary-monitor";
export { d1Rollbacks } from "./origin/canary-rollbacks";

/** Verified bytes of one of the model's graphs, by its name in `graphs`. */
export type GraphLoader = (graph: string) => Promise<Uint8Array>;

/** The origin of each model (per-model settings fall back to the global ones). */
export type OriginFor = (model: string) => OriginConfig;

/** `primary` with the fraud model's attribution graph, if it declares one (its attribution
 * batch cut at the scored step: src/tasks/fraud/attribution.ts), in a session of its own; without
 * it the batch runs whole. */
function withAttribution(
  primary: InferenceRuntime,
  manifest: Manifest,
  loadGraph: GraphLoader,
): InferenceRuntime {
  const declared = manifest.graphs.attribution;
  if (declared === undefined) return primary;
  const attribution = createWasmRuntime({
    inputs: declared.inputs,
    outputs: declared.outputs,
    loadModel: () => loadGraph("attribution"),
    preOptimized: builtAhead(declared),
  });
  if (attribution.tensors === undefined) throw new Error("the WASM runtime offers tensors");
  return {
    ...primary,
    async load(signal) {
      await Promise.all([primary.load(signal), attribution.load(signal)]);
    },
    graphs: { attribution: attribution.tensors },
  };
}

function wasmRuntime(manifest: Manifest, loadGraph: GraphLoader): InferenceRuntime {
  if (manifest.task === "text-to-image") {
    const graph = (name: "text_encoder" | "unet" | "vae_decoder") => {
      const declared = manifest.graphs[name];
      if (declared === undefined)
        throw new Error(`Model "${manifest.name}" has no graph "${name}"`);
      return createWasmRuntime({
        inputs: declared.inputs,
        outputs: declared.outputs,
        loadModel: () => loadGraph(name),
      });
    };
    const { defaults, ...spec } = manifest.diffusion;
    return createDiffusionLoopRuntime(
      { textEncoder: graph("text_encoder"), unet: graph("unet"), vaeDecoder: graph("vae_decoder") },
      spec,
      defaults,
    );
  }
  const name = primaryGraphName(manifest);
  const graph = primaryGraph(manifest);
  if (graph === undefined)
    throw new Error(`Model "${manifest.name}" runs in the isolate but has no graph "${name}"`);
  const tensors = createWasmRuntime({
    inputs: graph.inputs,
    outputs: graph.outputs,
    loadModel: () => loadGraph(name),
    preOptimized: builtAhead(graph),
  });
  if (manifest.task === "fraud-scoring") return withAttribution(tensors, manifest, loadGraph);
  if (manifest.task !== "text-generation") return tensors;
  const decoder = tensors.tensors;
  if (decoder === undefined) throw new Error("the WASM runtime offers tensors");
  return { ...tensors, generation: decodeLoop(decoder, manifest.generation) };
}

function originRuntime(
  manifest: Manifest,
  origin: OriginConfig,
  breakers: Breakers,
  fleet: Fleet,
): InferenceRuntime {
  switch (manifest.protocol) {
    case "vllm-completions":
      if (manifest.task !== "text-generation")
        throw new Error(`Model "${manifest.name}": vllm-completions serves text generation only`);
      return createVllmRuntime({
        model: manifest,
        contextLength: manifest.generation.contextLength,
        origin,
        breakers,
        fleet,
      });
    case "tensor-stream":
      if (manifest.task !== "text-to-image")
        throw new Error(`Model "${manifest.name}": tensor-stream serves text-to-image only`);
      return createTensorStreamRuntime({ model: manifest, origin, breakers, fleet });
    case "oip-v2":
    case undefined: {
      const graph = primaryGraph(manifest);
      if (graph === undefined)
        throw new Error(`Model "${manifest.name}" has no graph to run over OIP v2`);
      return createOipRuntime({
        model: manifest,
        inputs: graph.inputs,
        outputs: graph.outputs,
        origin,
        fleet,
      });
    }
    default: {
      const unknown: never = manifest.protocol;
      throw new Error(`Unknown origin protocol ${String(unknown)}`);
    }
  }
}

/**
 * An origin config whose fields are read through `read` at each use, so a runtime built once
 * per isolate follows its configuration (src/isolate.ts reads it from the isolate's env).
 */
function liveOrigin(read: () => OriginConfig): OriginConfig {
  return {
    get url() {
      return read().url;
    },
    get replicas() {
      return read().replicas;
    },
    get configError() {
      return read().configError;
    },
    get apiKey() {
      return read().apiKey;
    },
    get timeoutMs() {
      return read().timeoutMs;
    },
    get firstTokenTimeoutMs() {
      return read().firstTokenTimeoutMs;
    },
    get idleTimeoutMs() {
      return read().idleTimeoutMs;
    },
  };
}

/**
 * The Worker's runtimes: each model where its manifest says, origin ones over their protocol,
 * their calls guarded by `breakers` (one per origin URL; default: a table of their own) and
 * spread over each pool's replicas by one fleet (what these runtimes know of every replica).
 */
export function edgeRuntimes(
  origin: OriginConfig | OriginFor = NO_ORIGIN,
  breakers: Breakers = createBreakers(),
) {
  const originFor: OriginFor = typeof origin === "function" ? origin : () => origin;
  const fleet = createFleet({ breakers });
  return (manifest: Manifest, loadGraph: GraphLoader): InferenceRuntime => {
    switch (manifest.runtime) {
      case "wasm":
        return wasmRuntime(manifest, loadGraph);
      case "origin":
        return originRuntime(
          manifest,
          typeof origin === "function" ? liveOrigin(() => originFor(manifest.name)) : origin,
          breakers,
          fleet,
        );
      default: {
        const unknown: never = manifest.runtime;
        throw new Error(`Unknown runtime ${String(unknown)}`);
      }
    }
  };
}
