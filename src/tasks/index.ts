// The task registry: one service per registered model, built once per isolate. Routes ask
// here; a task never knows whether its model runs in this isolate or on an origin.
import type { Manifest } from "../models/manifest";
import type { ModelRegistry, RegisteredModel } from "../models/registry";
import type { RunResult } from "../runtime";
import type { Tensor } from "../runtime/tensor";
import { createFraudScorer, type FraudScorer } from "./fraud/fraud-scoring";
import { createTextClassifier, type TextClassifier } from "./text-classification";
import { createTokenization, type Tokenization } from "./tokenization";

export type TaskService =
  | { task: "text-classification"; service: TextClassifier }
  | { task: "fraud-scoring"; service: FraudScorer }
  | { task: "raw"; service: { load(): Promise<void> } };

export type ModelState = "unloaded" | "loading" | "ready" | "failed";

export interface ServedModel {
  manifest: Manifest;
  task: TaskService;
  /** /tokenize and /detokenize: present when the manifest names a tokenizer. */
  tokenization: Tokenization | undefined;
  /** Raw tensor inference (Open Inference Protocol): feeds checked against the manifest. */
  infer(feeds: Record<string, Tensor>, outputNames?: readonly string[]): Promise<RunResult>;
  state(): ModelState;
  /** Loads and verifies everything the model needs; resolves true when ready. */
  ready(): Promise<boolean>;
  /** Why the last load failed, for logs and the ready endpoint. */
  failure(): string | undefined;
}

function createTask(model: RegisteredModel, tensorsOnly: boolean): TaskService {
  const { manifest } = model;
  if (tensorsOnly) return { task: "raw", service: { load: () => model.runtime.load() } };
  switch (manifest.task) {
    case "text-classification":
      return { task: manifest.task, service: createTextClassifier({ ...model, manifest }) };
    case "fraud-scoring":
      return { task: manifest.task, service: createFraudScorer({ ...model, manifest }) };
    case "raw":
      return { task: manifest.task, service: { load: () => model.runtime.load() } };
    default: {
      const unknown: never = manifest;
      throw new Error(`Unknown task in ${JSON.stringify(unknown)}`);
    }
  }
}

function serve(model: RegisteredModel, tensorsOnly: boolean): ServedModel {
  const task = createTask(model, tensorsOnly);
  let state: ModelState = "unloaded";
  let failure: string | undefined;
  let loading: Promise<boolean> | undefined;
  return {
    manifest: model.manifest,
    task,
    tokenization: createTokenization(model),
    infer: (feeds, outputNames) => model.runtime.run(feeds, outputNames),
    state: () => state,
    failure: () => failure,
    ready() {
      if (state === "ready" && (model.runtime.stillLoaded?.() ?? true)) return Promise.resolve(true);
      loading ??= (async () => {
        state = "loading";
        try {
          await task.service.load();
          state = "ready";
          failure = undefined;
          return true;
        } catch (error) {
          state = "failed";
          failure = error instanceof Error ? error.message : String(error);
          console.error(JSON.stringify({ event: "model_load_failed", model: model.manifest.name, error: failure }));
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

/** Wraps every registered model in its task service. */
export function createServices(registry: ModelRegistry, options: ServicesOptions = {}): Services {
  const served = new Map(registry.list().map((model) => [model.manifest.name, serve(model, options.tensorsOnly ?? false)]));
  return { list: () => [...served.values()], get: (name) => served.get(name) };
}
