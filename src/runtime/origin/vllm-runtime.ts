// The generation capability over a vLLM-compatible origin (vLLM itself, or the reference
// origin in origin/): token ids out, token ids back, streamed. Retries happen only before
// the first token; an overloaded origin's 429/503 surface with Retry-After before any
// byte reaches the client; the circuit breaker fails fast while the origin is down; the
// caller's signal (the client leaving, a stop string matched) aborts the origin request.
import { ServiceError } from "../../errors/service-error";
import { SseParser } from "../../protocols/sse";
import { CompletionChunk, completionRequest, ErrorEvent, errorMessage, isCompletionChunk } from "../../protocols/vllm-completions";
import type { GenerationCapability, GenerationRequest, GenerationStep, InferenceRuntime } from "../runtime";
import { breakerFor } from "./circuit-breaker";
import { deadlines, type Deadlines } from "./deadlines";
import { DEFAULT_FIRST_TOKEN_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS, type OriginConfig } from "./origin-config";

export interface VllmRuntimeOptions {
  model: { name: string };
  contextLength: number;
  origin: OriginConfig;
  /** Attempts before the first token (1 = no retry). */
  attempts?: number;
}

const RETRY_DELAYS_MS = [100, 400];

function upstream(detail: string, cause?: unknown): ServiceError {
  return new ServiceError(502, "upstream_error", detail, { cause, headers: { "retry-after": "5" } });
}

async function reason(response: Response): Promise<string> {
  const text = (await response.text().catch(() => "")).slice(0, 4000);
  try {
    const parsed = ErrorEvent.safeParse(JSON.parse(text));
    if (parsed.success) return errorMessage(parsed.data).slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 200) || `HTTP ${response.status}`;
}

/** A refusal before the stream: the client's status where it is the client's to act on. */
async function refusal(response: Response): Promise<ServiceError> {
  const detail = await reason(response);
  const retryAfter = response.headers.get("retry-after") ?? "1";
  if (response.status === 429) return new ServiceError(429, "rate_limited", `The GPU origin is busy: ${detail}`, { headers: { "retry-after": retryAfter } });
  if (response.status === 503) return new ServiceError(503, "upstream_unavailable", `The GPU origin is unavailable: ${detail}`, { headers: { "retry-after": retryAfter } });
  if (response.status === 400) {
    const code = /context|maximum|too long|max_model_len/i.test(detail) ? "context_length_exceeded" : "invalid_request";
    return new ServiceError(400, code, `The GPU origin refused the request: ${detail}`, { field: code === "context_length_exceeded" ? "messages" : "body" });
  }
  return upstream(`The GPU origin failed (${response.status}: ${detail})`);
}

const retryable = (error: unknown) => error instanceof ServiceError && (error.code === "upstream_error" || error.code === "upstream_timeout");

/** One chunk's step (undefined for the usage chunk); throws the 502 of a broken chunk or a mid-stream error event. */
function readStep(data: string, stopIds: ReadonlySet<number>): GenerationStep | undefined {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    throw upstream("The GPU origin sent a chunk that is not JSON", error);
  }
  // Error events are rare: only objects that look like one pay for the schema.
  if (typeof json === "object" && json !== null && ("error" in json || ("object" in json && json.object === "error"))) {
    const failed = ErrorEvent.safeParse(json);
    throw upstream(`The GPU origin failed mid-stream: ${failed.success ? errorMessage(failed.data) : "an unreadable error event"}`);
  }
  // Checked by hand per token; zod runs only to describe a chunk that fails the check.
  if (!isCompletionChunk(json)) throw upstream("The GPU origin sent an invalid completion chunk", CompletionChunk.safeParse(json).error);
  const [choice] = json.choices;
  if (choice === undefined) return undefined;
  const tokenIds = choice.token_ids ?? [];
  if (choice.token_ids == null && (choice.text ?? "") !== "") throw upstream("The GPU origin sent no token_ids (return_token_ids unsupported?)");
  if (choice.finish_reason == null) return { tokenIds };
  if (choice.finish_reason !== "stop" && choice.finish_reason !== "length") return { tokenIds, finishReason: "stop" };
  const last = tokenIds.at(-1);
  // vLLM keeps the stop token in token_ids (its text is dropped); the edge drops the id.
  if (choice.finish_reason === "stop" && last !== undefined && stopIds.has(last)) return { tokenIds: tokenIds.slice(0, -1), finishReason: "stop", stopTokenId: last };
  return { tokenIds, finishReason: choice.finish_reason };
}

/** A runtime whose model decodes on a vLLM-compatible origin. */
export function createVllmRuntime(options: VllmRuntimeOptions): InferenceRuntime {
  const { model, origin } = options;
  const attempts = options.attempts ?? 1 + RETRY_DELAYS_MS.length;

  const url = (): string => {
    if (!origin.url) throw new ServiceError(503, "not_configured", `Model "${model.name}" runs on the GPU origin, and no origin URL is set for it`);
    return `${origin.url.replace(/\/+$/, "")}/v1/completions`;
  };

  /** Sends the request and waits for the response headers (the connect phase). */
  async function open(request: GenerationRequest, limits: Deadlines): Promise<Response> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
    if (origin.apiKey) headers.authorization = `Bearer ${origin.apiKey}`;
    limits.phase(origin.timeoutMs, "did not answer");
    let response: Response;
    try {
      response = await fetch(url(), { method: "POST", headers, body: JSON.stringify(completionRequest(model.name, request)), signal: limits.signal });
    } catch (error) {
      if (limits.timedOut()) throw limits.signal.reason;
      if (limits.signal.aborted) throw limits.signal.reason;
      throw upstream("The GPU origin could not be reached", error);
    }
    if (!response.ok) throw await refusal(response);
    if (response.body === null) throw upstream("The GPU origin sent no stream");
    return response;
  }

  /** Reads the origin's SSE stream into steps; `progress.yielded` tells the retry loop a step went out. */
  async function* steps(body: ReadableStream<Uint8Array>, request: GenerationRequest, limits: Deadlines, progress: { yielded: boolean }): AsyncGenerator<GenerationStep> {
    const stopIds = new Set(request.stopTokenIds);
    limits.phase(origin.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS, "sent no first token");
    // One loop over the body's chunks and a plain parser: no generator between the bytes and the step.
    const reader = body.getReader();
    const parser = new SseParser();
    try {
      for (;;) {
        limits.signal.throwIfAborted();
        const { done, value } = await reader.read();
        for (const data of done ? parser.end() : parser.push(value)) {
          if (data === "[DONE]") throw upstream("The GPU origin's stream ended before a finish reason");
          const step = readStep(data, stopIds);
          if (step === undefined) continue; // the usage chunk: the edge counts tokens itself
          limits.phase(origin.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, "went silent mid-stream (no chunk)");
          progress.yielded = true;
          yield step;
          if (step.finishReason !== undefined) return;
        }
        if (done) throw upstream("The GPU origin's stream ended before a finish reason");
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  const generation: GenerationCapability = {
    contextLength: options.contextLength,
    async *generate(request, signal) {
      const base = url();
      const breaker = breakerFor(base);
      breaker.check();
      let lastError: unknown;
      for (let attempt = 0; attempt < attempts; attempt += 1) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1] ?? 1000));
        signal.throwIfAborted();
        const limits = deadlines(signal);
        const progress = { yielded: false };
        try {
          const response = await open(request, limits);
          breaker.success();
          yield* steps(response.body!, request, limits, progress);
          return;
        } catch (error) {
          if (signal.aborted) throw signal.reason;
          if (error instanceof ServiceError && (error.status >= 500 && error.code !== "upstream_unavailable")) breaker.failure();
          // After the first token the client has text: no retry, the route ends the stream with an error event.
          if (progress.yielded || !retryable(error)) throw error;
          lastError = error;
        } finally {
          // Whatever ended the iteration (a stop string, the client leaving, an error) ends the origin request.
          limits.abort(new DOMException("generation ended", "AbortError"));
        }
      }
      throw lastError;
    },
  };

  return {
    kind: "origin",
    // The origin is asked at generation time; nothing to verify up front without costing a request.
    async load() {
      url();
    },
    generation,
  };
}
