// The generation capability over a vLLM-compatible origin (vLLM itself, or the reference origin in
// origin/): token ids out, token ids back, streamed.
import { ServiceError } from "../../errors/service-error";
import { SseParser } from "../../protocols/sse";
import { completionRequest } from "../../protocols/vllm-completions";
import { stepOf, upstream } from "./vllm-steps";
import { awaitTail, drain, refusal } from "./vllm-response";
import type { GenerationCapability, GenerationRequest, InferenceRuntime } from "../runtime";
import { createBreakers, type Breakers } from "./circuit-breaker";
import { deadlines, type Deadlines } from "./deadlines";
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  type OriginConfig,
} from "./origin-config";

export interface VllmRuntimeOptions {
  model: { name: string };
  contextLength: number;
  origin: OriginConfig;
  /** The breakers of the origins it calls (default: its own). */
  breakers?: Breakers;
  /** Attempts before the first token (1 = no retry). */
  attempts?: number;
}

const RETRY_DELAYS_MS = [100, 400];

const retryable = (error: unknown) =>
  error instanceof ServiceError &&
  (error.code === "upstream_error" || error.code === "upstream_timeout");

/**
 * A runtime whose model decodes on a vLLM-compatible origin.
 *
 * Retries happen only before the first token; an overloaded origin's 429/503 surface with
 * Retry-After before any byte reaches the client; the circuit breaker fails fast while the origin
 * is down; the caller's signal (the client leaving, a stop string matched) aborts the origin
 * request. Once the origin has answered 200 the runtime says so with a step of no ids, so that a
 * streaming route can send its headers while the origin prefills; a retry after that, or a first
 * token that never comes, then ends the stream with an error event instead. Per origin read, one
 * step (the events already read, joined). The finish waits for the usage chunk behind it (briefly:
 * vLLM writes both at once) for the prompt tokens the origin's prefix cache served; then the body
 * is read to its end in the background so that workerd keeps the connection for the next call.
 */
export function createVllmRuntime(options: VllmRuntimeOptions): InferenceRuntime {
  const { model, origin, breakers = createBreakers() } = options;
  const attempts = options.attempts ?? 1 + RETRY_DELAYS_MS.length;

  const url = (): string => {
    if (!origin.url)
      throw new ServiceError(
        503,
        "not_configured",
        `Model "${model.name}" runs on the GPU origin, and no origin URL is set for it`,
      );
    return `${origin.url.replace(/\/+$/, "")}/v1/completions`;
  };

  /** Sends the request and waits for the response headers (the connect phase). */
  async function open(
    request: GenerationRequest,
    limits: Deadlines,
    fetchSignal: AbortSignal,
  ): Promise<Response> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (origin.apiKey) headers.authorization = `Bearer ${origin.apiKey}`;
    limits.phase(origin.timeoutMs, "did not answer");
    let response: Response;
    try {
      response = await fetch(url(), {
        method: "POST",
        headers,
        body: JSON.stringify(completionRequest(model.name, request)),
        signal: fetchSignal,
      });
    } catch (error) {
      if (limits.timedOut()) throw limits.signal.reason;
      if (limits.signal.aborted) throw limits.signal.reason;
      throw upstream("The GPU origin could not be reached", error);
    }
    if (!response.ok) throw await refusal(response);
    if (response.body === null) throw upstream("The GPU origin sent no stream");
    return response;
  }

  const generation: GenerationCapability = {
    contextLength: options.contextLength,
    async *generate(request, signal) {
      if (request.maxTokens <= 0 && request.promptLogprobs === undefined) {
        // Nothing to generate and nothing to score: no request to make.
        yield { tokenIds: [], finishReason: "length" };
        return;
      }
      const base = url();
      const breaker = breakers(base);
      breaker.check();
      let lastError: unknown;
      let accepted = false;
      for (let attempt = 0; attempt < attempts; attempt += 1) {
        if (attempt > 0)
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1] ?? 1000));
        signal.throwIfAborted();
        const limits = deadlines(signal);
        let yielded = false;
        const stopIds = new Set(request.stopTokenIds);
        const prompt =
          request.promptLogprobs === undefined
            ? undefined
            : { ids: request.promptIds, count: request.promptLogprobs, read: false };
        let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
        // The fetch's own signal, fed by `limits` until the finish is read: after it, the
        // caller's end (the task aborts its signal when it is done) must not cut the body the
        // edge still drains.
        const upstreamAbort = new AbortController();
        const forward = () => upstreamAbort.abort(limits.signal.reason);
        limits.signal.addEventListener("abort", forward, { once: true });
        let finished = false;
        try {
          const response = await open(request, limits, upstreamAbort.signal);
          breaker.success();
          limits.phase(
            origin.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
            "sent no first token",
          );
          if (!accepted) {
            accepted = true;
            yield { tokenIds: [] };
          }
          // read once per call, not per chunk
          const idleMs = origin.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
          // One loop from the body's chunks to the steps: a plain parser, no generator in between.
          reader = response.body!.getReader();
          const parser = new SseParser();
          for (;;) {
            limits.signal.throwIfAborted();
            const { done, value } = await reader.read();
            const { step, failure, tailRead } = stepOf(
              done ? parser.end() : parser.push(value),
              stopIds,
              request.logprobs,
              prompt,
            );
            if (step !== undefined && request.maxTokens <= 0) {
              // The prompt's logprobs alone: the one token asked for to get them is not the
              // client's.
              if (step.promptLogprobs === undefined)
                throw failure ?? upstream("The GPU origin sent no prompt logprobs");
              yield { tokenIds: [], finishReason: "length", promptLogprobs: step.promptLogprobs };
              return;
            }
            if (step !== undefined) {
              limits.phase(idleMs, "went silent mid-stream (no chunk)");
              yielded = true;
              finished = step.finishReason !== undefined;
              if (finished && !tailRead && !done) await awaitTail(reader, parser, step);
              yield step;
              if (finished) return;
            }
            if (failure !== undefined) throw failure;
            if (done) throw upstream("The GPU origin's stream ended before a finish reason");
          }
        } catch (caught) {
          if (signal.aborted) throw signal.reason;
          const error = limits.errorOf(caught);
          if (
            error instanceof ServiceError &&
            error.status >= 500 &&
            error.code !== "upstream_unavailable"
          )
            breaker.failure();
          // After the first token the client has text: no retry, the route ends the stream with an
          // error event.
          if (yielded || !retryable(error)) throw error;
          lastError = error;
        } finally {
          limits.signal.removeEventListener("abort", forward);
          limits.clear();
          if (finished && reader !== undefined) {
            // The origin's tail (usage chunk, [DONE]) is read to the end, in the background, so
            // workerd pools the connection: it reuses only a body read to its end.
            void drain(reader);
          } else {
            // Whatever else ended the iteration (a stop string, the client leaving, an error) ends
            // the origin request.
            upstreamAbort.abort(new DOMException("generation ended", "AbortError"));
            await reader?.cancel().catch(() => undefined);
          }
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
