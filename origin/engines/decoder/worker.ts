// The decoder engine on a worker thread of its own, so decode steps never stall the HTTP thread's
// sockets.
import { parentPort, workerData } from "node:worker_threads";
import { ServiceError } from "../../../src/errors/service-error";
import type { EngineMetricName, EngineMetrics } from "../../metrics/vllm-metrics";
import { createSession } from "../onnx-session";
import { Channel } from "./channel";
import { DecoderEngine } from "./engine";
import type { GenerationStep } from "./generation-params";
import { loadVocabulary } from "./vocabulary";
import {
  ADMITTED,
  END,
  FAIL,
  INC,
  OBSERVE,
  STEP,
  type DecoderWorkerInit,
  type EngineRecord,
  type FromEngine,
  type ToEngine,
} from "./thread-messages";

if (parentPort === null)
  throw new Error("decoder/worker.ts runs as a worker thread (decoder/thread.ts starts it)");
const port = parentPort;
const init = workerData as DecoderWorkerInit;
const post = (message: FromEngine) => port.postMessage(message);

let engine: DecoderEngine | undefined;
let records: EngineRecord[] = [];
/** Sends the turn's records at its end: the first await of the engine's loop after them. */
const flush = () => {
  post({
    type: "records",
    records,
    kvCacheBytes: engine?.kvCacheBytes ?? 0,
    prefixCacheBytes: engine?.prefixCacheBytes ?? 0,
  });
  records = [];
};
const record = (entry: EngineRecord) => {
  if (records.length === 0) queueMicrotask(flush);
  records.push(entry);
};

const controllers = new Map<number, AbortController>();

/** A request's steps, relayed to the HTTP thread's channel for it. */
class RelayedSteps extends Channel<GenerationStep> {
  constructor(private readonly id: number) {
    super();
  }

  override push(step: GenerationStep): void {
    // The first step's cached-token count rides along; later steps' tuples end at stopReason,
    // or at the logprob when the request asked for them; an echo's first step adds its prompt's.
    if (step.promptLogprobs !== undefined)
      record([
        STEP,
        this.id,
        step.tokenId,
        step.finishReason,
        step.stopReason,
        step.cachedTokens ?? null,
        step.logprob,
        step.promptLogprobs,
      ]);
    else if (step.logprob !== undefined)
      record([
        STEP,
        this.id,
        step.tokenId,
        step.finishReason,
        step.stopReason,
        step.cachedTokens ?? null,
        step.logprob,
      ]);
    else
      record(
        step.cachedTokens === undefined
          ? [STEP, this.id, step.tokenId, step.finishReason, step.stopReason]
          : [STEP, this.id, step.tokenId, step.finishReason, step.stopReason, step.cachedTokens],
      );
  }

  override close(error?: unknown): void {
    if (!controllers.delete(this.id)) return;
    if (error === undefined) record([END, this.id]);
    else if (error instanceof ServiceError && error.status < 500)
      record([FAIL, this.id, error.message, error.status, error.field]);
    else
      record([
        FAIL,
        this.id,
        error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error),
      ]);
  }
}

const relay = (name: EngineMetricName) => ({
  inc: (labels: Readonly<Record<string, string>>, by = 1) =>
    record([INC, name, by, labels === init.labels ? null : labels]),
  observe: (labels: Readonly<Record<string, string>>, value: number) =>
    record([OBSERVE, name, value, labels === init.labels ? null : labels]),
});
const metrics = {
  ...Object.fromEntries(init.metricNames.map((name) => [name, relay(name)])),
  labelsOf: () => init.labels,
} as unknown as EngineMetrics;

port.on("message", (message: ToEngine) => {
  if (message.type === "abort") {
    controllers.get(message.id)?.abort();
    return;
  }
  if (message.type === "stop") process.exit(0); // in a worker: ends this thread, between runs
  if (engine === undefined) return; // the HTTP thread submits only once ready
  const { id } = message;
  const controller = new AbortController();
  controllers.set(id, controller);
  const steps = new RelayedSteps(id);
  try {
    engine.submit(message.params, controller.signal, {
      steps,
      arrivedAt: message.arrivedAt - performance.timeOrigin,
      admitted: () => record([ADMITTED, id]),
    });
  } catch (error) {
    // A request the engine refuses as a client's error (one the HTTP thread should have refused
    // first) fails alone; anything else is the engine's failure, and ends this thread as before.
    if (!(error instanceof ServiceError) || error.status >= 500) throw error;
    steps.close(error);
  }
});

try {
  const session = await createSession(init.stepGraph, init.settings);
  const prefillSession =
    init.prefillGraph === null ? session : await createSession(init.prefillGraph, init.settings);
  const vocabulary =
    init.tokenizer === undefined
      ? undefined
      : loadVocabulary(init.tokenizer, init.generation.vocabSize);
  engine = new DecoderEngine(
    init.modelName,
    session,
    init.generation,
    init.limits,
    metrics,
    init.splitAttention,
    prefillSession,
    vocabulary,
  );
  post({ type: "ready", structuredOutputs: vocabulary !== undefined });
} catch (error) {
  post({ type: "failed", error: error instanceof Error ? error.message : String(error) });
}
