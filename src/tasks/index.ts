// The task registry: one served model per registered model, built once per isolate, exposing its
// capabilities so routes ask for one by name.
import { ServiceError } from "../errors/service-error";
import { primaryGraph, type Graph, type Manifest } from "../models/manifest";
import type { ModelRegistry, RegisteredModel } from "./registered-model";
import type { RunOptions, RunResult } from "../runtime";
import type { Tensor } from "../tensors/tensor";
import { createFraudScorer, type FraudScorer } from "./fraud/scoring";
import { createImageClassifier, type ImageClassifier } from "./image-classification";
import { createTextClassifier, type TextClassifier } from "./text-classification";
import { createTokenization, type Tokenization } from "./tokenization";
import { createTextGenerator, type TextGenerator } from "./text-generation/text-generation";
import { createImageGenerator, type ImageGenerator } from "./text-to-image/text-to-image";

/** Raw tensor inference (Open Inference Protocol): feeds checked against the graph. */
export interface TensorService {
  readonly graph: Graph;
  infer(feeds: Record<string, Tensor>, options?: RunOptions): Promise<RunResult>;
}

export interface Capabilities {
  tensors?: TensorService;
  textClassification?: TextClassifier;
  imageClassification?: ImageClassifier;
  fraudScoring?: FraudScorer;
  textGeneration?: TextGenerator;
  textToImage?: ImageGenerator;
}

const CAPABILITY_NAMES: Record<keyof Capabilities, string> = {
  tensors: "tensor inference",
  textClassification: "text-classification",
  imageClassification: "image-classification",
  fraudScoring: "fraud-scoring",
  textGeneration: "text-generation",
  textToImage: "text-to-image",
};

export type ModelState = "unloaded" | "loading" | "ready" | "failed";

/**
 * A task never knows whether its model runs in this isolate or on an origin.
 */
export interface ServedModel {
  manifest: Manifest;
  capabilities: Capabilities;
  /** /tokenize and /detokenize: present when the manifest names a tokenizer. */
  tokenization: Tokenization | undefined;
  state(): ModelState;
  /** Loads and verifies everything the model needs; resolves true when ready. */
  ready(): Promise<boolean>;
  /** Why the last load failed, for logs and the ready endpoint. */
  failure(): string | undefined;
}

/** The model's capability, or a 422 naming the field that chose the model. */
export function capability<K extends keyof Capabilities>(
  model: ServedModel,
  name: K,
  field: string,
): NonNullable<Capabilities[K]> {
  const found = model.capabilities[name];
  if (found === undefined || found === null) {
    throw new ServiceError(
      422,
      "unprocessable_input",
      `Model "${model.manifest.name}" does not offer ${CAPABILITY_NAMES[name]}`,
      { field },
    );
  }
  return found;
}

function tensorService(model: RegisteredModel): TensorService | undefined {
  const graph = primaryGraph(model.manifest);
  const tensors = model.runtime.tensors;
  if (graph === undefined || tensors === undefined) return undefined;
  return { graph, infer: (feeds, options) => tensors.run(feeds, options) };
}

interface Served {
  capabilities: Capabilities;
  load: () => Promise<void>;
}

function capabilitiesOf(model: RegisteredModel, tensorsOnly: boolean): Served {
  const { manifest } = model;
  const tensors = tensorService(model);
  const runtimeOnly = { capabilities: { tensors }, load: () => model.runtime.load() };
  if (tensorsOnly) return runtimeOnly;
  switch (manifest.task) {
    case "text-classification": {
      const textClassification = createTextClassifier({ ...model, manifest });
      return {
        capabilities: { tensors, textClassification },
        load: () => textClassification.load(),
      };
    }
    case "image-classification": {
      const imageClassification = createImageClassifier({ ...model, manifest });
      return {
        capabilities: { tensors, imageClassification },
        load: () => imageClassification.load(),
      };
    }
    case "fraud-scoring": {
      const fraudScoring = createFraudScorer({ ...model, manifest });
      return { capabilities: { tensors, fraudScoring }, load: () => fraudScoring.load() };
    }
    case "text-generation": {
      const textGeneration = createTextGenerator({ ...model, manifest });
      return { capabilities: { tensors, textGeneration }, load: () => textGeneration.load() };
    }
    case "text-to-image": {
      const textToImage = createImageGenerator({ ...model, manifest });
      return { capabilities: { textToImage }, load: () => textToImage.load() };
    }
    case "raw":
      return runtimeOnly;
    default: {
      const unknown: never = manifest;
      throw new Error(`Unknown task in ${JSON.stringify(unknown)}`);
    }
  }
}

function serve(model: RegisteredModel, tensorsOnly: boolean): ServedModel {
  const { capabilities, load } = capabilitiesOf(model, tensorsOnly);
  let state: ModelState = "unloaded";
  let failure: string | undefined;
  let loading: Promise<boolean> | undefined;
  return {
    manifest: model.manifest,
    capabilities,
    tokenization: createTokenization(model),
    state: () => state,
    failure: () => failure,
    ready() {
      if (state === "ready" && (model.runtime.stillLoaded?.() ?? true))
        return Promise.resolve(true);
      loading ??= (async () => {
        state = "loading";
        try {
          await load();
          state = "ready";
          failure = undefined;
          return true;
        } catch (error) {
          state = "failed";
          failure = error instanceof Error ? error.message : String(error);
          console.error(
            JSON.stringify({
              event: "model_load_failed",
              model: model.manifest.name,
              error: failure,
            }),
          );
          return false;
        } finally {
          loading = undefined;
        }
      })();
      return loading;
    },
  };
}

export interface Services {
  list(): ServedModel[];
  get(name: string): ServedModel | undefined;
}

export interface ServicesOptions {
  /** Serve every model as tensors in, tensors out (the reference origin: tokenizers and
   * featurizers stay at the edge, so only the graph has to load). */
  tensorsOnly?: boolean;
}

/** Wraps every registered model in its capabilities. */
export function createServices(registry: ModelRegistry, options: ServicesOptions = {}): Services {
  const served = new Map(
    registry
      .list()
      .map((model) => [model.manifest.name, serve(model, options.tensorsOnly ?? false)]),
  );
  return { list: () => [...served.values()], get: (name) => served.get(name) };
}
