// The tensor-stream capability over a diffusion origin (src/protocols/tensor-stream.ts): tensors
// in, one OIP tensor per SSE event back.
import { ServiceError } from "../../errors/service-error";
import { sseData } from "../../protocols/sse";
import {
  streamErrorMessage,
  TensorStreamError,
  TensorStreamEvent,
} from "../../protocols/tensor-stream";
import type { Tensor } from "../../tensors/tensor";
import type { InferenceRuntime, TensorStreamCapability, TensorStreamStep } from "../runtime";
import { createBreakers, type Breakers, type CircuitBreaker } from "./circuit-breaker";
import { deadlines, type Deadlines } from "./deadlines";
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  replicasOf,
  type OriginConfig,
} from "./origin-config";
import { failover, RETRY_DELAYS_MS } from "./replica-failover";
import { createFleet, type Fleet } from "./replica-pool";
import { originTraceHeaders } from "./trace-context";

export interface TensorStreamRuntimeOptions {
  model: { name: string };
  origin: OriginConfig;
  /** The breakers of the origins it calls (default: its own). */
  breakers?: Breakers;
  /** What it knows of the replicas it calls (default: its own, over `breakers`). */
  fleet?: Fleet;
  /** Attempts before the first event on one replica (1 = no retry). */
  attempts?: number;
}

const upstream = (detail: string, cause?: unknown) =>
  new ServiceError(502, "upstream_error", detail, { cause, headers: { "retry-after": "5" } });

async function refusal(response: Response): Promise<ServiceError> {
  const text = (await response.text().catch(() => "")).slice(0, 4000);
  let detail = text.slice(0, 200) || `HTTP ${response.status}`;
  try {
    const parsed = TensorStreamError.safeParse(JSON.parse(text));
    if (parsed.success) detail = streamErrorMessage(parsed.data).slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  const retryAfter = response.headers.get("retry-after") ?? "1";
  if (response.status === 429)
    return new ServiceError(429, "rate_limited", `The GPU origin is busy: ${detail}`, {
      headers: { "retry-after": retryAfter },
    });
  if (response.status === 503)
    return new ServiceError(
      503,
      "upstream_unavailable",
      `The GPU origin is unavailable: ${detail}`,
      { headers: { "retry-after": retryAfter } },
    );
  // The edge validated the request: an origin that refuses it disagrees with our manifest.
  return upstream(`The GPU origin refused the request (${response.status}: ${detail})`);
}

/** Tensors → the protocol's JSON inputs (flat row-major data). */
function inputsOf(feeds: Record<string, Tensor>) {
  return Object.entries(feeds).map(([name, tensor]) => ({
    name,
    datatype: tensor.datatype,
    shape: tensor.shape,
    // Ids and noise are small (n × 16, n × 196): plain JSON numbers (BigInt ids converted).
    data: Array.from(tensor.data, Number),
  }));
}

/**
 * A runtime whose model runs its loop on a tensor-stream origin, one URL or a pool.
 *
 * Like the vLLM adapter: the least loaded healthy replica first, failover (or, with one replica,
 * retries) only before the first event, an overloaded origin's 429/503 surface with Retry-After,
 * the per-replica circuit breaker fails fast while it is down, phase deadlines (connect, first
 * event, idle gap), and the caller's signal (the client leaving) aborts the origin request.
 */
export function createTensorStreamRuntime(options: TensorStreamRuntimeOptions): InferenceRuntime {
  const { model, origin, breakers = createBreakers() } = options;
  const fleet = options.fleet ?? createFleet({ breakers });
  const attempts = options.attempts ?? 1 + RETRY_DELAYS_MS.length;
  const path = `/v2/models/${encodeURIComponent(model.name)}/generate_stream`;

  async function open(
    url: string,
    body: string,
    limits: Deadlines,
  ): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...originTraceHeaders(),
    };
    if (origin.apiKey) headers.authorization = `Bearer ${origin.apiKey}`;
    limits.phase(origin.timeoutMs, "did not answer");
    let response: Response;
    try {
      response = await fetch(`${url}${path}`, {
        method: "POST",
        headers,
        body,
        signal: limits.signal,
      });
    } catch (error) {
      if (limits.signal.aborted) throw limits.signal.reason;
      throw upstream("The GPU origin could not be reached", error);
    }
    if (!response.ok) throw await refusal(response);
    if (response.body === null) throw upstream("The GPU origin sent no stream");
    return response.body;
  }

  async function* events(
    body: ReadableStream<Uint8Array>,
    limits: Deadlines,
  ): AsyncGenerator<TensorStreamStep> {
    limits.phase(
      origin.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
      "sent no first step",
    );
    for await (const data of sseData(body, limits.signal)) {
      if (data === "[DONE]") throw upstream("The GPU origin's stream ended before the image");
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch (error) {
        throw upstream("The GPU origin sent an event that is not JSON", error);
      }
      if (typeof json === "object" && json !== null && "error" in json) {
        const failed = TensorStreamError.safeParse(json);
        throw upstream(
          "The GPU origin failed mid-stream: " +
            `${failed.success ? streamErrorMessage(failed.data) : "an unreadable error event"}`,
        );
      }
      const event = TensorStreamEvent.safeParse(json);
      if (!event.success)
        throw upstream("The GPU origin sent an invalid tensor-stream event", event.error);
      const outputs = Object.fromEntries(
        event.data.outputs.map((tensor) => [
          tensor.name,
          {
            datatype: tensor.datatype,
            shape: tensor.shape,
            data: Float32Array.from(tensor.data),
          } satisfies Tensor,
        ]),
      );
      limits.phase(
        origin.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
        "went silent mid-stream (no step)",
      );
      yield { step: event.data.step, final: event.data.final, outputs };
      if (event.data.final) return;
    }
    throw upstream("The GPU origin's stream ended before the image");
  }

  /** One call to one replica, its breaker told the outcome. */
  async function* attempt(
    url: string,
    breaker: CircuitBreaker,
    body: string,
    signal: AbortSignal,
  ): AsyncGenerator<TensorStreamStep> {
    const limits = deadlines(signal);
    try {
      const stream = await open(url, body, limits);
      breaker.success();
      yield* events(stream, limits);
    } catch (caught) {
      if (signal.aborted) throw signal.reason;
      const error = limits.errorOf(caught);
      if (
        error instanceof ServiceError &&
        error.status >= 500 &&
        error.code !== "upstream_unavailable"
      )
        breaker.failure();
      throw error;
    } finally {
      limits.abort(new DOMException("stream ended", "AbortError"));
    }
  }

  const tensorStream: TensorStreamCapability = {
    async *stream(feeds, { parameters, signal }) {
      const pool = replicasOf(origin, model.name);
      const body = JSON.stringify({ inputs: inputsOf(feeds), parameters: parameters ?? {} });
      yield* failover({
        fleet,
        pool,
        probePath: "/v2/health/ready",
        attempts,
        signal,
        call: (url, breaker) => attempt(url, breaker, body, signal),
      });
    },
  };

  return {
    kind: "origin",
    async load() {
      replicasOf(origin, model.name);
    },
    tensorStream,
  };
}
