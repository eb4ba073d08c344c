// Runs a text generation for a route over the shared event stream (../event-stream.ts): the
// first event is read before answering — the origin's acceptance (its 200, before the first
// token) or the first text — then SSE frames per token, `[DONE]` at the end.
import type { PreparedPrompt, TextEvent, TextGenerator, GenerationOptions } from "../../tasks/text-generation/text-generation";
import { allEvents, sseData, sseResponse as eventsResponse, startEvents, type StartedEvents } from "../event-stream";

export type StartedGeneration = StartedEvents<TextEvent>;

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

/** Starts a generation and reads its first event; throws the ServiceError of a refusal. */
export function startGeneration(generator: TextGenerator, prompt: PreparedPrompt, options: GenerationOptions, clientSignal: AbortSignal): Promise<StartedGeneration> {
  return startEvents((signal) => generator.generate(prompt, options, signal), clientSignal);
}

/** What a stream-format needs: how to frame each event, and what closes the stream. */
export interface StreamFormat {
  /** Frames sent before the first event (e.g. the assistant role chunk). */
  opening(): unknown[];
  /** Per token: return pre-serialized JSON strings (jsonTemplate) rather than objects. */
  text(text: string): unknown[];
  done(event: Extract<TextEvent, { type: "done" }>): unknown[];
}

/** A started generation as SSE: one chunk per event (its frames joined), errors as `data: {error}`, then [DONE]. */
export function sseResponse(started: StartedGeneration, format: StreamFormat, headers: Record<string, string> = {}): Response {
  const frames = (list: readonly unknown[]) => list.map(sseData).join("");
  return eventsResponse(
    started,
    {
      opening: () => frames(format.opening()),
      event: (event) => (event.type === "accepted" ? "" : frames(event.type === "text" ? format.text(event.text) : format.done(event))),
      failure: "generation_failed_mid_stream",
    },
    headers,
  );
}

/** Reads a started generation to its end: the whole text, its finish reason and usage. */
export async function collect(started: StartedGeneration): Promise<{ text: string; done: Extract<TextEvent, { type: "done" }> }> {
  let text = "";
  let done: Extract<TextEvent, { type: "done" }> | undefined;
  for await (const event of allEvents(started)) {
    if (event.type === "text") text += event.text;
    else if (event.type === "done") done = event;
  }
  if (done === undefined) throw new Error("generation ended without a done event");
  return { text, done };
}
