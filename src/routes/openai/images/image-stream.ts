// Runs an image generation for a route over the shared event stream: either collects the PNGs or
// streams OpenAI's image events.
import type {
  ImageEvent,
  ImageGenerator,
  ImageOptions,
  ImageTimings,
} from "../../../tasks/text-to-image/text-to-image";
import {
  allEvents,
  openaiError,
  sseResponse,
  startEvents,
  type StartedEvents,
} from "../../http/event-stream";

export type StartedImages = StartedEvents<ImageEvent>;

export function startImages(
  generator: ImageGenerator,
  ids: BigInt64Array,
  options: ImageOptions,
  clientSignal: AbortSignal,
  timings?: ImageTimings,
): Promise<StartedImages> {
  return startEvents((signal) => generator.generate(ids, options, signal, timings), clientSignal);
}

/** Every final PNG, in image order (previews are skipped). */
export async function collectImages(started: StartedImages): Promise<Uint8Array[]> {
  const images: Uint8Array[] = [];
  for await (const event of allEvents(started))
    if (event.type === "image") images[event.image] = event.png;
  return images;
}

/** Base64 of bytes (btoa over 32 KiB chunks: no Buffer needed). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export interface ImageStreamFormat {
  partial(
    event: Extract<ImageEvent, { type: "partial" }>,
  ): { type: string } & Record<string, unknown>;
  completed(
    event: Extract<ImageEvent, { type: "image" }>,
  ): { type: string } & Record<string, unknown>;
}

/** OpenAI's image events carry their type as the SSE event name too. */
const namedEvent = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * Streamed: image_generation.partial_image per preview, image_generation.completed per image, the
 * last one ending the stream (OpenAI's image stream has no `data: [DONE]`); a failure after the
 * headers is an `error` event.
 */
export function imageStreamResponse(started: StartedImages, format: ImageStreamFormat): Response {
  return sseResponse(started, {
    opening: () => "",
    event: (event) =>
      namedEvent(event.type === "partial" ? format.partial(event) : format.completed(event)),
    failure: "image_generation_failed_mid_stream",
    end: () => "",
    error: (failure) => namedEvent({ type: "error", error: openaiError(failure) }),
  });
}
