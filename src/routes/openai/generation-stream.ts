// Runs a text generation for a route: waits for the first event before answering, so an
// origin's refusal (429/503 with Retry-After, 502, 504) is a plain HTTP error and never a
// half-sent stream; then streams SSE, ending with `data: [DONE]` — after an error event if
// the generation fails mid-stream. The client leaving (request.signal under the
// enable_request_signal flag, or the body stream's cancel) aborts the generation.
import { toServiceError } from "../../errors/problem";
import type { PreparedPrompt, TextEvent, TextGenerator, GenerationOptions } from "../../tasks/text-generation/text-generation";

const encoder = new TextEncoder();

/** SSE headers; `Content-Encoding: identity` keeps wrangler dev from buffering (workers-sdk#7435). */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "content-encoding": "identity",
} as const;

export const sseEvent = (data: unknown) => encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);

export interface StartedGeneration {
  /** Events, the first one already read (so errors before it were thrown by `start`). */
  events: AsyncGenerator<TextEvent>;
  first: TextEvent | undefined;
  /** Aborts the generation (the client left). */
  abort(): void;
}

/** Starts a generation and reads its first event; throws the ServiceError of a refusal. */
export async function startGeneration(
  generator: TextGenerator,
  prompt: PreparedPrompt,
  options: GenerationOptions,
  clientSignal: AbortSignal,
): Promise<StartedGeneration> {
  const cancelled = new AbortController();
  const signal = AbortSignal.any([clientSignal, cancelled.signal]);
  const events = generator.generate(prompt, options, signal);
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

/** What a stream-format needs: how to frame each event, and what closes the stream. */
export interface StreamFormat {
  /** Frames sent before the first event (e.g. the assistant role chunk). */
  opening(): unknown[];
  text(text: string): unknown[];
  done(event: Extract<TextEvent, { type: "done" }>): unknown[];
}

/** The SSE response of a started generation: frames, errors as `data: {error}`, then [DONE]. */
export function sseResponse(started: StartedGeneration, format: StreamFormat, headers: Record<string, string> = {}): Response {
  let opened = false;
  const frames = (event: TextEvent) => (event.type === "text" ? format.text(event.text) : format.done(event));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!opened) {
          opened = true;
          for (const frame of format.opening()) controller.enqueue(sseEvent(frame));
          if (started.first !== undefined) for (const frame of frames(started.first)) controller.enqueue(sseEvent(frame));
          return;
        }
        const next = await started.events.next();
        if (next.done) {
          controller.enqueue(sseEvent("[DONE]"));
          controller.close();
          return;
        }
        for (const frame of frames(next.value)) controller.enqueue(sseEvent(frame));
      } catch (error) {
        const failure = toServiceError(error);
        console.error(JSON.stringify({ event: "generation_failed_mid_stream", error: failure.message }));
        controller.enqueue(sseEvent({ error: { message: failure.message, type: failure.status >= 500 ? "server_error" : "invalid_request_error", code: failure.code } }));
        controller.enqueue(sseEvent("[DONE]"));
        controller.close();
      }
    },
    cancel() {
      started.abort();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}

/** Reads a started generation to its end: the whole text, its finish reason and usage. */
export async function collect(started: StartedGeneration): Promise<{ text: string; done: Extract<TextEvent, { type: "done" }> }> {
  let text = "";
  let done: Extract<TextEvent, { type: "done" }> | undefined;
  const take = (event: TextEvent) => {
    if (event.type === "text") text += event.text;
    else done = event;
  };
  if (started.first !== undefined) take(started.first);
  for await (const event of started.events) take(event);
  if (done === undefined) throw new Error("generation ended without a done event");
  return { text, done };
}
