// The origin's models: every folder under ORIGIN_MODELS, each loaded (verified, then a
// session created) in the background so /health can answer 503 while they load. Tensor
// models get a tensor engine, text-generation models a decoder engine.
import { ServiceError } from "../src/errors/service-error";
import type { OriginConfig } from "./config";
import { DecoderEngine } from "./engines/decoder/engine";
import { DecoderThread, type Decoder } from "./engines/decoder/thread";
import { loadVocabulary } from "./engines/decoder/vocabulary";
import type { DiffusionEngine } from "./engines/diffusion/engine";
import { loadDiffusionEngine } from "./engines/diffusion/load";
import { createDiffusionMetrics } from "./engines/diffusion/metrics";
import { createSession } from "./engines/onnx-session";
import { createTensorEngine, type TensorEngine } from "./engines/tensor-engine";
import { parseManifest, type OriginManifest } from "./manifests";
import { createVllmMetrics, type VllmMetrics } from "./metrics/vllm-metrics";
import { Registry } from "../src/protocols/prometheus";
import { listModelFolders, readOptionalVerifiedFile, readVerifiedFile } from "./model-files";
import { lastPositionLogits } from "./onnx/last-logits";
import { splitAttention } from "./onnx/split-attention";

export interface HostedModel {
  manifest: OriginManifest;
  status: "loading" | "ready" | "failed";
  failure: string | undefined;
  tensor: TensorEngine | undefined;
  decoder: Decoder | undefined;
  /** Text-to-image models: the denoising loop shared by their requests. */
  diffusion?: DiffusionEngine;
  /**
   * How a decoder runs its graph: rewritten (split attention: no cache copies; logits for the last
   * position only), or as exported.
   */
  mode: string | undefined;
}

export interface ModelHost {
  models: ReadonlyMap<string, HostedModel>;
  /** Settles when every model has loaded or failed. */
  loaded: Promise<void>;
  metrics: Registry;
  /** The model by name, or a 404 naming `field`. */
  find(name: string, field: string): HostedModel;
  /** The model's engine once loaded, or a 503 with Retry-After. */
  requireReady(model: HostedModel): void;
  /** Stops the engines' own threads (between runs). */
  close(): Promise<void>;
}

export function createModelHost(config: OriginConfig): ModelHost {
  const settings = {
    executionProviders: config.executionProviders,
    intraOpThreads: config.intraOpThreads,
  };
  const models = new Map<string, HostedModel>();
  const registry = new Registry();
  const decoders = () =>
    [...models.values()].flatMap((model) => (model.decoder === undefined ? [] : [model.decoder]));

  const folders = listModelFolders(config.modelsDir).map((folder) => ({
    folder,
    manifest: parseManifest(folder.manifest, config.generationGraph),
  }));
  const contextLengths = folders.flatMap(({ manifest }) =>
    manifest.kind === "generation" ? [manifest.generation.contextLength] : [],
  );
  const metrics: VllmMetrics = createVllmMetrics(
    registry,
    () =>
      decoders().map((engine) => ({
        modelName: engine.modelName,
        running: () => engine.runningCount,
        waiting: () => engine.waitingCount,
        kvCacheBytes: () => engine.kvCacheBytes,
        prefixCacheBytes: () => engine.prefixCacheBytes,
      })),
    Math.max(1, ...contextLengths),
  );

  const diffusionMetrics = createDiffusionMetrics(registry, () =>
    [...models.values()].flatMap((model) =>
      model.diffusion === undefined
        ? []
        : [{ model: model.manifest.name, value: model.diffusion.runningCount }],
    ),
  );

  const load = async (folder: { dir: string }, model: HostedModel) => {
    try {
      if (model.manifest.kind === "diffusion") {
        model.diffusion = await loadDiffusionEngine(
          folder.dir,
          model.manifest,
          settings,
          config,
          diffusionMetrics,
        );
        model.status = "ready";
        return;
      }
      const { graph } = model.manifest;
      const bytes = await readVerifiedFile(folder.dir, graph.file, graph.sha256);
      if (model.manifest.kind === "generation") {
        const split = config.splitAttention
          ? splitAttention(bytes, model.manifest.generation.layers)
          : null;
        // Logits for the last position only: with the rewrites (the graph as exported stays as
        // exported).
        const last = split !== null ? lastPositionLogits(split) : null;
        const stepGraph = last ?? split ?? bytes;
        // Prefills (no past) run the graph as exported, with last-position logits (see
        // DecoderEngine).
        const prefillGraph = split !== null ? lastPositionLogits(bytes) : null;
        const { name, generation, tokenizer: ref } = model.manifest;
        // The tokens' bytes for structured outputs, verified as the graph is; a folder without the
        // file serves none.
        const tokenizerBytes = await readOptionalVerifiedFile(folder.dir, ref.file, ref.sha256);
        if (tokenizerBytes === undefined)
          console.error(
            JSON.stringify({
              event: "structured_outputs_off",
              model: name,
              reason: `no ${ref.file}`,
            }),
          );
        const tokenizer =
          tokenizerBytes === undefined ? undefined : { file: ref.file, bytes: tokenizerBytes };
        const limits = {
          maxBatch: config.maxBatch,
          maxWaiting: config.maxWaiting,
          prefillTokensPerStep: config.prefillTokensPerStep,
          prefixCacheBytes: config.prefixCacheBytes,
          prefixCacheAdmitAll: config.prefixCacheAdmitAll,
          prefillUsPerToken: config.prefillFaultUsPerToken,
        };
        if (config.decoderThread) {
          const thread = new DecoderThread(
            {
              modelName: name,
              generation,
              limits,
              settings,
              stepGraph,
              prefillGraph,
              splitAttention: split !== null,
              ...(tokenizer === undefined ? {} : { tokenizer }),
            },
            metrics,
          );
          await thread.ready;
          model.decoder = thread;
        } else {
          const session = await createSession(stepGraph, settings);
          const prefillSession =
            prefillGraph !== null ? await createSession(prefillGraph, settings) : session;
          model.decoder = new DecoderEngine(
            name,
            session,
            generation,
            limits,
            metrics,
            split !== null,
            prefillSession,
            tokenizer === undefined ? undefined : loadVocabulary(tokenizer, generation.vocabSize),
          );
        }
        model.mode =
          `${
            split === null
              ? "graph as exported"
              : `split attention${last === null ? "" : ", last-position logits"}` +
                `${prefillGraph === null ? "" : "; prefill as exported, last-position logits"}`
          }` + `; ${config.decoderThread ? "own thread" : "HTTP thread"}`;
      } else {
        model.tensor = await createTensorEngine(graph, bytes, settings);
      }
      model.status = "ready";
    } catch (error) {
      model.status = "failed";
      model.failure = error instanceof Error ? error.message : String(error);
      console.error(
        JSON.stringify({ event: "model_failed", model: model.manifest.name, error: model.failure }),
      );
    }
  };

  const loads = folders.map(({ folder, manifest }) => {
    const model: HostedModel = {
      manifest,
      status: "loading",
      failure: undefined,
      tensor: undefined,
      decoder: undefined,
      mode: undefined,
    };
    models.set(manifest.name, model);
    return load(folder, model);
  });

  return {
    models,
    loaded: Promise.all(loads).then(() => undefined),
    metrics: registry,
    find(name, field) {
      const model = models.get(name);
      if (model === undefined) {
        throw new ServiceError(
          404,
          "model_not_found",
          `No model named "${name}" (available: ${[...models.keys()].join(", ")})`,
          { field },
        );
      }
      return model;
    },
    async close() {
      await Promise.all([...models.values()].map((model) => model.decoder?.close?.()));
    },
    requireReady(model) {
      if (model.status === "ready") return;
      throw new ServiceError(
        503,
        "model_not_ready",
        `Model "${model.manifest.name}" is not ready: ${model.failure ?? "loading"}`,
        { headers: { "retry-after": "5" } },
      );
    },
  };
}
