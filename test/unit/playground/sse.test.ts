// The playground's SSE reader: events split anywhere across network reads come out whole, in order.
import { describe, expect, it } from "vitest";
import { readEvents } from "../../../playground/src/sse";

function streamOf(pieces: string[]): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

describe("readEvents", () => {
  it("joins events split across reads, a multi-byte character included", async () => {
    const text =
      'event: image_generation.partial_image\ndata: {"i":0}\n\n' +
      'data: {"content":"café"}\n\n' +
      "data: [DONE]\n\n";
    const bytes = new TextEncoder().encode(text);
    // Every split point, so each boundary (mid-line, mid-character) is crossed once.
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoder = new TextDecoder();
      const pieces = [
        decoder.decode(bytes.slice(0, cut), { stream: true }),
        decoder.decode(bytes.slice(cut)),
      ];
      const seen: Array<[string | undefined, string]> = [];
      await readEvents(streamOf(pieces), ({ event, data }) => seen.push([event, data]));
      expect(seen, `cut at ${cut}`).toEqual([
        ["image_generation.partial_image", '{"i":0}'],
        [undefined, '{"content":"café"}'],
        [undefined, "[DONE]"],
      ]);
    }
  });

  it("lets a callback's error end the reading", async () => {
    const response = streamOf(['data: {"error":1}\n\n', "data: more\n\n"]);
    await expect(
      readEvents(response, () => {
        throw new Error("stream error event");
      }),
    ).rejects.toThrow("stream error event");
  });
});
