// How a route streams a task's events, for text generation and image generation alike: the
// first event is read before answering, so a refusal (429/503 with Retry-After, 502, 504) is
// a plain HTTP error and never a half-sent stream (for an origin LLM the first event is the
// origin's 200, so its prefill overlaps the response's start); then SSE, ending with `data: [DONE]` —
// after a `data: {"error": …}` event if the work fails mid-stream. The client leaving
// (request.signal under the enable_request_signal flag, or the body stream's cancel) aborts
// the work behind it.
import { toServiceError } from "../errors/problem";

const encoder = new TextEncoder();

/** SSE headers; `Content-Encoding: identity` keeps wrangler dev from buffering (workers-sdk#7435). */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "content-encoding": "identity",
} as const;

/** A task's events, the first one already read (so errors before it were thrown by `startEvents`). */
export interface StartedEvents<E> {
  events: AsyncGenerator<E>;
  first: E | undefined;
  /** Aborts the work (the client left). */
  abort(): void;
}

/** Starts the work with the client's signal (plus its own abort) and reads its first event. */
export async function startEvents<E>(generate: (signal: AbortSignal) => AsyncGenerator<E>, clientSignal: AbortSignal): Promise<StartedEvents<E>> {
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
}

/** `data: …` for a JSON value, or for a string that already is JSON (or `[DONE]`). */
export const sseData = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

/** The SSE response of started work: its events, an error event if it fails, then [DONE]. */
export function sseResponse<E>(started: StartedEvents<E>, format: SseFormat<E>, headers: Record<string, string> = {}): Response {
  let opened = false;
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    if (text !== "") controller.enqueue(encoder.encode(text));
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!opened) {
          opened = true;
          send(controller, format.opening() + (started.first === undefined ? "" : format.event(started.first)));
          return;
        }
        const next = await started.events.next();
        if (next.done) {
          send(controller, sseData("[DONE]"));
          controller.close();
          return;
        }
        send(controller, format.event(next.value));
      } catch (error) {
        const failure = toServiceError(error);
        console.error(JSON.stringify({ event: format.failure, error: failure.message }));
        const type = failure.status >= 500 ? "server_error" : "invalid_request_error";
        send(controller, sseData({ error: { message: failure.message, type, code: failure.code, param: failure.field ?? null } }) + sseData("[DONE]"));
        controller.close();
      }
    },
    cancel() {
      started.abort();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}
