// One call of a generation to one vLLM-compatible replica: the request sent, its phase deadlines,
// the stream read into steps, the replica's circuit breaker told the outcome. Which replica, and
// what happens after a failure, is vllm-runtime.ts's job.
import { CannotContinue, needsOutputPrefix } from "./continuation";
import {
  type EndpointLoad,
  LOAD_METRICS_FORMAT,
  LOAD_METRICS_FORMAT_HEADER,
  LOAD_METRICS_HEADER,
  parseEndpointLoad,
} from "../../protocols/endpoint-load-metrics";
import { SseParser } from "../../protocols/sse";
import { completionRequest, OUTPUT_PREFIX_HEADER } from "../../protocols/vllm-completions";
import type { GenerationRequest, GenerationStep } from "../runtime";
import { ServiceError } from "../../errors/service-error";
import type { CircuitBreaker } from "./circuit-breaker";
import { deadlines, type Deadlines } from "./deadlines";
import {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  type OriginConfig,
} from "./origin-config";
import { originTraceHeaders } from "./trace-context";
import { awaitTail, drain, refusal } from "./vllm-response";
import { stepOf, upstream } from "./vllm-steps";

export interface Attempt {
  /** The replica's base URL. */
  url: string;
  model: string;
  origin: OriginConfig;
  breaker: CircuitBreaker;
  /** Told the replica's queue when its answer reports it (ORCA's endpoint-load-metrics). */
  onLoad?: (load: EndpointLoad) => void;
}

/** Sends the request and waits for the response headers (the connect phase). */
async function open(
  { url, model, origin }: Attempt,
  request: GenerationRequest,
  limits: Deadlines,
  fetchSignal: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "text/event-stream",
    // Asks for the replica's queue on its answer (ORCA's header: vLLM sends it only when asked).
    [LOAD_METRICS_FORMAT_HEADER]: LOAD_METRICS_FORMAT,
    ...originTraceHeaders(),
  };
  if (origin.apiKey) headers.authorization = `Bearer ${origin.apiKey}`;
  limits.phase(origin.timeoutMs, "did not answer");
  let response: Response;
  try {
    response = await fetch(`${url}/v1/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify(completionRequest(model, request)),
      signal: fetchSignal,
    });
  } catch (error) {
    if (limits.timedOut()) throw limits.signal.reason;
    if (limits.signal.aborted) throw limits.signal.reason;
    throw upstream("The GPU origin could not be reached", error);
  }
  if (!response.ok) throw await refusal(response);
  if (response.body === null) throw upstream("The GPU origin sent no stream");
  if (
    needsOutputPrefix(request) &&
    response.headers.get(OUTPUT_PREFIX_HEADER) !== String(request.outputPrefixTokens)
  ) {
    await response.body.cancel().catch(() => undefined);
    throw new CannotContinue();
  }
  return response;
}

/**
 * Streams one call's steps: first a step of no ids once the replica answered 200 (so that a
 * streaming route can send its headers while the origin prefills), then one step per origin read
 * (the events already read, joined). The finish waits for the usage chunk behind it (briefly: vLLM
 * writes both at once) for the prompt tokens the origin's prefix cache served; then the body is
 * read to its end in the background so that workerd keeps the connection for the next call.
 * Throws what failed, after telling the breaker (5xx other than an overload answer).
 */
export async function* attemptGeneration(
  attempt: Attempt,
  request: GenerationRequest,
  signal: AbortSignal,
): AsyncGenerator<GenerationStep> {
  const { origin, breaker } = attempt;
  const limits = deadlines(signal);
  const stopIds = new Set(request.stopTokenIds);
  const prompt =
    request.promptLogprobs === undefined
      ? undefined
      : { ids: request.promptIds, count: request.promptLogprobs, read: false };
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  // The fetch's own signal, fed by `limits` until the finish is read: after it, the caller's end
  // (the task aborts its signal when it is done) must not cut the body the edge still drains.
  const upstreamAbort = new AbortController();
  const forward = () => upstreamAbort.abort(limits.signal.reason);
  limits.signal.addEventListener("abort", forward, { once: true });
  let finished = false;
  try {
    const response = await open(attempt, request, limits, upstreamAbort.signal);
    breaker.success();
    const load = parseEndpointLoad(response.headers.get(LOAD_METRICS_HEADER));
    if (load !== undefined) attempt.onLoad?.(load);
    limits.phase(
      origin.firstTokenTimeoutMs ?? DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
      "sent no first token",
    );
    yield { tokenIds: [] };
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
        // The prompt's logprobs alone: the one token asked for to get them is not the client's.
        if (step.promptLogprobs === undefined)
          throw failure ?? upstream("The GPU origin sent no prompt logprobs");
        yield { tokenIds: [], finishReason: "length", promptLogprobs: step.promptLogprobs };
        return;
      }
      if (step !== undefined) {
        limits.phase(idleMs, "went silent mid-stream (no chunk)");
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
    const found = limits.errorOf(caught);
    // A body that breaks off (the replica died: workerd's "error reading a body") is the
    // origin's failure, not the edge's.
    const error =
      found instanceof ServiceError ? found : upstream("The GPU origin's stream broke off", found);
    if (
      error instanceof ServiceError &&
      error.status >= 500 &&
      error.code !== "upstream_unavailable" &&
      !(error instanceof CannotContinue)
    )
      breaker.failure();
    throw error;
  } finally {
    limits.signal.removeEventListener("abort", forward);
    limits.clear();
    if (finished && reader !== undefined) {
      // The origin's tail (usage chunk, [DONE]) is read to the end, in the background, so workerd
      // pools the connection: it reuses only a body read to its end.
      void drain(reader);
    } else {
      // Whatever else ended the iteration (a stop string, the client leaving, an error) ends the
      // origin request.
      upstreamAbort.abort(new DOMException("generation ended", "AbortError"));
      await reader?.cancel().catch(() => undefined);
    }
  }
}
