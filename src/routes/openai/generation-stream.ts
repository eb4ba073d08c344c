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

/** A frame's SSE event text; a string frame is already JSON (or `[DONE]`). */
const sseText = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

export const sseEvent = (data: unknown) => encoder.encode(sseText(data));

/** Several frames as one chunk: one encode and one enqueue per event, not per frame. */
const sseEvents = (frames: readonly unknown[]) => encoder.encode(frames.length === 1 ? sseText(frames[0]) : frames.map(sseText).join(""));

/**
 * A JSON frame with one string slot, serialized once: `fill(text)` is the JSON of `shape`
 * with `text` in the slot, byte for byte what JSON.stringify would give, for the cost of
 * stringifying the text alone — the per-token frame of a stream.
 */
export function jsonTemplate(shape: (slot: string) => unknown): (text: string) => string {
  const SLOT = "\u0000slot\u0000";
  const json = JSON.stringify(shape(SLOT));
  const at = json.indexOf(JSON.stringify(SLOT));
  if (at === -1 || json.indexOf(JSON.stringify(SLOT), at + 1) !== -1) throw new Error("jsonTemplate: the shape must hold the slot exactly once");
  const head = json.slice(0, at);
  const tail = json.slice(at + JSON.stringify(SLOT).length);
  return (text) => head + JSON.stringify(text) + tail;
}

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
  /** Per token: return pre-serialized JSON strings (jsonTemplate) rather than objects. */
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
          const opening = [...format.opening(), ...(started.first === undefined ? [] : frames(started.first))];
          if (opening.length > 0) controller.enqueue(sseEvents(opening));
          return;
        }
        const next = await started.events.next();
        if (next.done) {
          controller.enqueue(sseEvent("[DONE]"));
          controller.close();
          return;
        }
        const out = frames(next.value);
        if (out.length > 0) controller.enqueue(sseEvents(out));
      } catch (error) {
        const failure = toServiceError(error);
        console.error(JSON.stringify({ event: "generation_failed_mid_stream", error: failure.message }));
        controller.enqueue(sseEvents([{ error: { message: failure.message, type: failure.status >= 500 ? "server_error" : "invalid_request_error", code: failure.code } }, "[DONE]"]));
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
