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
import { createBreakers, type Breakers } from "./circuit-breaker";
import { deadlines, type Deadlines } from "./deadlines";
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  type OriginConfig,
} from "./origin-config";

export interface TensorStreamRuntimeOptions {
  model: { name: string };
  origin: OriginConfig;
  /** The breakers of the origins it calls (default: its own). */
  breakers?: Breakers;
  /** Attempts before the first event (1 = no retry). */
  attempts?: number;
}

const RETRY_DELAYS_MS = [100, 400];

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

const retryable = (error: unknown) =>
  error instanceof ServiceError &&
  (error.code === "upstream_error" || error.code === "upstream_timeout");

/**
 * A runtime whose model runs its loop on a tensor-stream origin.
 *
 * Like the vLLM adapter: retries only before the first event, an overloaded origin's 429/503
 * surface with Retry-After, the per-URL circuit breaker fails fast while the origin is down, phase
 * deadlines (connect, first event, idle gap), and the caller's signal (the client leaving) aborts
 * the origin request.
 */
export function createTensorStreamRuntime(options: TensorStreamRuntimeOptions): InferenceRuntime {
  const { model, origin, breakers = createBreakers() } = options;
  const attempts = options.attempts ?? 1 + RETRY_DELAYS_MS.length;
  const url = (): string => {
    if (!origin.url)
      throw new ServiceError(
        503,
        "not_configured",
        `Model "${model.name}" runs on the GPU origin, and no origin URL is set for it`,
      );
    return (
      `${origin.url.replace(/\/+$/, "")}/v2/models/` +
      `${encodeURIComponent(model.name)}/generate_stream`
    );
  };

  async function open(body: string, limits: Deadlines): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (origin.apiKey) headers.authorization = `Bearer ${origin.apiKey}`;
    limits.phase(origin.timeoutMs, "did not answer");
    let response: Response;
    try {
      response = await fetch(url(), { method: "POST", headers, body, signal: limits.signal });
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

  const tensorStream: TensorStreamCapability = {
    async *stream(feeds, { parameters, signal }) {
      const base = url();
      const breaker = breakers(base);
      breaker.check();
      const body = JSON.stringify({ inputs: inputsOf(feeds), parameters: parameters ?? {} });
      let lastError: unknown;
      for (let attempt = 0; attempt < attempts; attempt += 1) {
        if (attempt > 0)
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1] ?? 1000));
        signal.throwIfAborted();
        const limits = deadlines(signal);
        let yielded = false;
        try {
          const stream = await open(body, limits);
          breaker.success();
          for await (const step of events(stream, limits)) {
            yielded = true;
            yield step;
          }
          return;
        } catch (caught) {
          if (signal.aborted) throw signal.reason;
          const error = limits.errorOf(caught);
          if (
            error instanceof ServiceError &&
            error.status >= 500 &&
            error.code !== "upstream_unavailable"
          )
            breaker.failure();
          if (yielded || !retryable(error)) throw error;
          lastError = error;
        } finally {
          limits.abort(new DOMException("stream ended", "AbortError"));
        }
      }
      throw lastError;
    },
  };

  return {
    kind: "origin",
    async load() {
      url();
    },
    tensorStream,
  };
}
