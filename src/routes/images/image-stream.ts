// Runs an image generation for a route: reads the first event before answering (so an
// origin's refusal is a plain HTTP error, never a half-sent stream), then either collects
// the PNGs or streams OpenAI's image events — image_generation.partial_image per preview,
// image_generation.completed per image — ending with `data: [DONE]`, after a
// `data: {"error": …}` event if the loop fails mid-stream. The client leaving aborts the loop.
import { toServiceError } from "../../errors/problem";
import type { ImageEvent, ImageGenerator, ImageOptions, ImageTimings } from "../../tasks/text-to-image/text-to-image";
import { SSE_HEADERS } from "../openai/generation-stream";

const encoder = new TextEncoder();

export interface StartedImages {
  events: AsyncGenerator<ImageEvent>;
  first: ImageEvent | undefined;
  abort(): void;
}

export async function startImages(generator: ImageGenerator, ids: BigInt64Array, options: ImageOptions, clientSignal: AbortSignal, timings?: ImageTimings): Promise<StartedImages> {
  const cancelled = new AbortController();
  const events = generator.generate(ids, options, AbortSignal.any([clientSignal, cancelled.signal]), timings);
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

/** Every final PNG, in image order (previews are skipped). */
export async function collectImages(started: StartedImages): Promise<Uint8Array[]> {
  const images: Uint8Array[] = [];
  const take = (event: ImageEvent) => {
    if (event.type === "image") images[event.image] = event.png;
  };
  if (started.first !== undefined) take(started.first);
  for await (const event of started.events) take(event);
  return images;
}

/** Base64 of bytes (btoa over 32 KiB chunks: no Buffer needed). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export interface ImageStreamFormat {
  partial(event: Extract<ImageEvent, { type: "partial" }>): { type: string } & Record<string, unknown>;
  completed(event: Extract<ImageEvent, { type: "image" }>): { type: string } & Record<string, unknown>;
}

const frame = (data: { type: string } | string) =>
  encoder.encode(typeof data === "string" ? `data: ${data}\n\n` : `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);

export function imageStreamResponse(started: StartedImages, format: ImageStreamFormat): Response {
  let first = started.first;
  const render = (event: ImageEvent) => (event.type === "partial" ? format.partial(event) : format.completed(event));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (first !== undefined) {
          controller.enqueue(frame(render(first)));
          first = undefined;
          return;
        }
        const next = await started.events.next();
        if (next.done) {
          controller.enqueue(frame("[DONE]"));
          controller.close();
          return;
        }
        controller.enqueue(frame(render(next.value)));
      } catch (error) {
        const failure = toServiceError(error);
        console.error(JSON.stringify({ event: "image_generation_failed_mid_stream", error: failure.message }));
        const type = failure.status >= 500 ? "server_error" : "invalid_request_error";
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ error: { message: failure.message, type, code: failure.code, param: failure.field ?? null } })}\n\n`));
        controller.enqueue(frame("[DONE]"));
        controller.close();
      }
    },
    cancel() {
      started.abort();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}
