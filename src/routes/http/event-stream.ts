// How a route streams a task's events, for text and image generation alike: the first event is read
// before answering, so a refusal is a plain HTTP error and never a half-sent stream.
import { toServiceError } from "../../errors/problem";
import type { ServiceError } from "../../errors/service-error";

const encoder = new TextEncoder();

/**
 * SSE headers; `Content-Encoding: identity` keeps wrangler dev from buffering (workers-sdk#7435).
 */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "content-encoding": "identity",
} as const;

/**
 * A task's events, the first one already read (so errors before it were thrown by `startEvents`).
 */
export interface StartedEvents<E> {
  events: AsyncGenerator<E>;
  first: E | undefined;
  /** Aborts the work (the client left). */
  abort(): void;
}

/**
 * Starts the work with the client's signal (plus its own abort) and reads its first event.
 *
 * Refusals this turns into HTTP errors: 429/503 with Retry-After, 502, 504. For an origin LLM the
 * first event is the origin's 200, so its prefill overlaps the response's start.
 */
export async function startEvents<E>(
  generate: (signal: AbortSignal) => AsyncGenerator<E>,
  clientSignal: AbortSignal,
): Promise<StartedEvents<E>> {
  const cancelled = new AbortController();
  const events = generate(AbortSignal.any([clientSignal, cancelled.signal]));
  const abort = () => {
    cancelled.abort(new DOMException("the client went away", "AbortError"));
    void events.return(undefined).catch(() => undefined);
  };
  try {
    const first = await events.next();
    return { events, first: first.done ? undefined : first.value, abort };
  } catch (error) {
    abort();
    throw error;
  }
}

/** Every event of a started stream, the first included, in order. */
export async function* allEvents<E>(started: StartedEvents<E>): AsyncGenerator<E> {
  if (started.first !== undefined) yield started.first;
  yield* started.events;
}

export interface SseFormat<E> {
  /** The SSE text sent before the first event's (e.g. the assistant role chunk); may be "". */
  opening(): string;
  /** One event's SSE text (one or more `data:` events; "" sends nothing). */
  event(event: E): string;
  /** The log line's name when the work fails mid-stream. */
  failure: string;
  /** The SSE text that ends a stream whose work ended; default `data: [DONE]`. */
  end?(): string;
  /** The SSE text that ends a stream whose work failed; default `data: {"error"}` then [DONE]. */
  error?(failure: ServiceError): string;
}

/** `data: …` for a JSON value, or for a string that already is JSON (or `[DONE]`). */
export const sseData = (data: unknown) =>
  `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

/**
 * Several started streams as one (a request's `n` choices): each event comes with its
 * stream's index, in the order the streams produce them; every stream's first event is among
 * them. The merged stream's own `first` is undefined. Ending it early, or a stream failing
 * (which fails it), aborts every stream still going; `abort` aborts them all.
 */
export function mergeEvents<E>(
  streams: readonly StartedEvents<E>[],
): StartedEvents<readonly [number, E]> {
  const abort = () => {
    for (const stream of streams) stream.abort();
  };
  type Next = { index: number; result: IteratorResult<E> } | { index: number; error: unknown };
  async function* merged(): AsyncGenerator<readonly [number, E]> {
    const pending = new Map<number, Promise<Next>>();
    let ended = false;
    const pull = (index: number, stream: StartedEvents<E>) =>
      pending.set(
        index,
        stream.events.next().then(
          (result) => ({ index, result }),
          (error: unknown) => ({ index, error }),
        ),
      );
    try {
      for (const [index, stream] of streams.entries())
        if (stream.first !== undefined) yield [index, stream.first] as const;
      streams.forEach((stream, index) => pull(index, stream));
      while (pending.size > 0) {
        const next = await Promise.race(pending.values());
        if ("error" in next) throw next.error;
        if (next.result.done === true) {
          pending.delete(next.index);
          continue;
        }
        pull(next.index, streams[next.index] as StartedEvents<E>);
        yield [next.index, next.result.value] as const;
      }
      ended = true;
    } finally {
      if (!ended) abort();
    }
  }
  return { events: merged(), first: undefined, abort };
}

/** A failure as OpenAI's error object: `{message, type, code, param}`. */
export function openaiError(failure: ServiceError) {
  const type = failure.status >= 500 ? "server_error" : "invalid_request_error";
  return { message: failure.message, type, code: failure.code, param: failure.field ?? null };
}

/** A chat-style failure: `data: {"error": {message, type, code, param}}`, then [DONE]. */
const chatError = (failure: ServiceError) =>
  sseData({ error: openaiError(failure) }) + sseData("[DONE]");

/**
 * The SSE response of started work: its events, then the format's end (or its error if it fails).
 *
 * The stream ends as the protocol's format says: by default (chat-style) `data: [DONE]`, after a
 * `data: {"error": …}` event if the work fails mid-stream. The client leaving (request.signal under
 * the enable_request_signal flag, or the body stream's cancel) aborts the work behind it.
 */
export function sseResponse<E>(
  started: StartedEvents<E>,
  format: SseFormat<E>,
  headers: Record<string, string> = {},
): Response {
  let opened = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        let text = "";
        if (!opened) {
          opened = true;
          text =
            format.opening() + (started.first === undefined ? "" : format.event(started.first));
        }
        // Each pull sends something (an event's text, or the end): a pull that enqueues nothing
        // is not called again until the reader asks again.
        while (text === "") {
          const next = await started.events.next();
          if (next.done === true) {
            const end = format.end === undefined ? sseData("[DONE]") : format.end();
            if (end !== "") controller.enqueue(encoder.encode(end));
            controller.close();
            return;
          }
          text = format.event(next.value);
        }
        controller.enqueue(encoder.encode(text));
      } catch (error) {
        const failure = toServiceError(error);
        console.error(JSON.stringify({ event: format.failure, error: failure.message }));
        controller.enqueue(encoder.encode((format.error ?? chatError)(failure)));
        controller.close();
      }
    },
    cancel() {
      started.abort();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}
