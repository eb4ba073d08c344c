// The HTTP thread's side of a decoder engine that runs on its own thread, with the same surface as
// DecoderEngine.
import { once } from "node:events";
import type { Worker } from "node:worker_threads";
import { ServiceError } from "../../../src/errors/service-error";
import type { VllmMetrics } from "../../metrics/vllm-metrics";
import { startWorker } from "../worker-thread";
import { Channel } from "./channel";
import { atCapacity, type DecoderLimits } from "./limits";
import type { GenerationParams, GenerationStep } from "./generation-params";
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

/** What routes and metrics need of a decoder, in-process (DecoderEngine) or on its thread. */
export interface Decoder {
  readonly modelName: string;
  readonly runningCount: number;
  readonly waitingCount: number;
  readonly kvCacheBytes: number;
  readonly prefixCacheBytes: number;
  /** Whether it can serve structured outputs (it has the model's token bytes). */
  readonly structuredOutputs: boolean;
  submit(params: GenerationParams, signal: AbortSignal): { steps: AsyncIterable<GenerationStep> };
  /** Stops a thread of its own, between runs (an engine in-process has none). */
  close?(): Promise<void>;
}

/** A FAIL record's error: the client's as the engine raised it, or the decoder's 500. */
function failure([, , message, status, field]: Extract<
  EngineRecord,
  [typeof FAIL, ...unknown[]]
>): ServiceError {
  if (status === 400 || status === 422)
    return new ServiceError(
      status,
      "invalid_request",
      message,
      field === undefined ? {} : { field },
    );
  return new ServiceError(500, "internal_error", "The decoder failed", {
    cause: new Error(message),
  });
}

interface InFlight {
  steps: Channel<GenerationStep>;
  state: "waiting" | "running";
}

type ThreadInit = Omit<DecoderWorkerInit, "labels" | "metricNames">;

/**
 * The HTTP thread's side of a decoder engine running on its own thread (worker.ts): the
 * same submit / gauges surface as DecoderEngine, so routes and metrics do not know which
 * they talk to. It keeps the requests in flight itself, so the queue bound (429) and the
 * running/waiting gauges are exact the moment a request aborts (vllm#22545), before the
 * engine hears of it; the engine drops an aborted row before its next step. If the thread
 * dies, its requests fail with 500 and a new thread starts.
 */
export class DecoderThread implements Decoder {
  readonly modelName: string;
  private worker: Worker | undefined;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 0;
  private kvBytes = 0;
  private prefixBytes = 0;
  private vocabulary = false;
  private closed: Promise<void> | undefined;
  private readonly init: DecoderWorkerInit;
  private readonly limits: DecoderLimits;

  /** Settles once the engine's sessions are created (rejects with the reason they were not). */
  readonly ready: Promise<void>;

  constructor(
    init: ThreadInit,
    private readonly metrics: VllmMetrics,
  ) {
    this.modelName = init.modelName;
    const metricNames = Object.keys(metrics).filter(
      (name): name is DecoderWorkerInit["metricNames"][number] => name !== "labelsOf",
    );
    // The engine enforces no queue bound of its own: this side does, on requests it knows are live.
    this.init = {
      ...init,
      limits: { ...init.limits, maxWaiting: Number.MAX_SAFE_INTEGER },
      labels: metrics.labelsOf(init),
      metricNames,
    };
    this.limits = init.limits;
    this.ready = this.start();
  }

  get runningCount(): number {
    let count = 0;
    for (const request of this.inFlight.values()) if (request.state === "running") count += 1;
    return count;
  }

  get waitingCount(): number {
    return this.inFlight.size - this.runningCount;
  }

  get kvCacheBytes(): number {
    return this.kvBytes;
  }

  get prefixCacheBytes(): number {
    return this.prefixBytes;
  }

  get structuredOutputs(): boolean {
    return this.vocabulary;
  }

  submit(params: GenerationParams, signal: AbortSignal): { steps: AsyncIterable<GenerationStep> } {
    const worker = this.worker;
    if (worker === undefined)
      throw new ServiceError(
        503,
        "model_not_ready",
        `The decoder of "${this.modelName}" is restarting`,
        { headers: { "retry-after": "1" } },
      );
    if (this.inFlight.size >= this.limits.maxBatch + this.limits.maxWaiting)
      throw atCapacity(this.limits);
    const id = this.nextId++;
    const request: InFlight = { steps: new Channel<GenerationStep>(), state: "waiting" };
    this.inFlight.set(id, request);
    const abort = () => {
      if (this.inFlight.get(id) !== request) return;
      this.inFlight.delete(id);
      request.steps.close();
      this.send(worker, { type: "abort", id });
    };
    if (signal.aborted) abort();
    else {
      signal.addEventListener("abort", abort, { once: true });
      this.send(worker, {
        type: "submit",
        id,
        params,
        arrivedAt: performance.timeOrigin + performance.now(),
      });
    }
    return request;
  }

  /**
   * Stops the thread between two runs (Worker.terminate() during onnxruntime's synchronous
   * run aborts the whole process); requests in flight fail.
   */
  close(): Promise<void> {
    this.closed ??= this.stop();
    return this.closed;
  }

  private async stop(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    const exited = once(worker, "exit");
    this.send(worker, { type: "stop" });
    await exited;
  }

  private send(worker: Worker, message: ToEngine): void {
    worker.postMessage(message);
  }

  private start(): Promise<void> {
    return new Promise((resolve, reject) => {
      let [started, dead] = [false, false];
      const worker = startWorker(new URL("./worker.ts", import.meta.url), {
        workerData: this.init,
      });
      worker.unref();
      worker.on("message", (message: FromEngine) => {
        if (message.type === "records") {
          [this.kvBytes, this.prefixBytes] = [message.kvCacheBytes, message.prefixCacheBytes];
          for (const entry of message.records) this.apply(entry);
        } else if (message.type === "ready") {
          started = true;
          this.vocabulary = message.structuredOutputs;
          this.worker = worker;
          resolve();
        } else reject(new Error(message.error));
      });
      const died = (reason: string) => {
        if (dead) return;
        dead = true;
        if (this.worker === worker) this.worker = undefined;
        const error = new ServiceError(500, "internal_error", "The decoder failed", {
          cause: new Error(reason),
        });
        for (const request of this.inFlight.values()) request.steps.close(error);
        this.inFlight.clear();
        if (!started) reject(new Error(reason));
        else if (this.closed === undefined) {
          console.error(
            JSON.stringify({ event: "decoder_thread_died", model: this.modelName, reason }),
          );
          this.start().catch((restart: unknown) =>
            console.error(
              JSON.stringify({
                event: "decoder_thread_restart_failed",
                model: this.modelName,
                error: String(restart),
              }),
            ),
          );
        }
      };
      worker.on("error", (error) => died(error.message));
      worker.on("exit", (code) => died(`exited with code ${code}`));
    });
  }

  private apply(entry: EngineRecord): void {
    switch (entry[0]) {
      case STEP: {
        const step: GenerationStep =
          entry[5] == null
            ? { tokenId: entry[2], finishReason: entry[3], stopReason: entry[4] }
            : {
                tokenId: entry[2],
                finishReason: entry[3],
                stopReason: entry[4],
                cachedTokens: entry[5],
              };
        if (entry[6] !== undefined) step.logprob = entry[6];
        if (entry[7] !== undefined) step.promptLogprobs = entry[7];
        this.inFlight.get(entry[1])?.steps.push(step);
        break;
      }
      case END:
      case FAIL: {
        const request = this.inFlight.get(entry[1]);
        if (request === undefined) break;
        this.inFlight.delete(entry[1]);
        request.steps.close(entry[0] === FAIL ? failure(entry) : undefined);
        break;
      }
      case ADMITTED: {
        const request = this.inFlight.get(entry[1]);
        if (request !== undefined) request.state = "running";
        break;
      }
      case INC:
        (
          this.metrics[entry[1]] as {
            inc(labels: Readonly<Record<string, string>>, by: number): void;
          }
        ).inc(entry[3] ?? this.init.labels, entry[2]);
        break;
      case OBSERVE:
        (
          this.metrics[entry[1]] as {
            observe(labels: Readonly<Record<string, string>>, value: number): void;
          }
        ).observe(entry[3] ?? this.init.labels, entry[2]);
        break;
    }
  }
}
