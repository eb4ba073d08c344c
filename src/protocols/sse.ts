// Server-sent events, read side: splits a byte stream into the `data:` payloads of its events, fed
// chunk by chunk.

/**
 * WHATWG EventSource parsing, reduced to what vLLM and OpenAI send. It runs once per streamed
 * token, so it is a plain parser fed chunk by chunk (no generator or stream hop per event),
 * decoding bytes itself with a streaming TextDecoder rather than through a TextDecoderStream, whose
 * extra stream hop per chunk cost the edge more CPU than anything else it does per token
 * (scripts/llm/relay-worker.js measures such hops).
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private data: string[] = [];
  /** The last chunk ended in "\r": a "\n" starting the next one belongs to that line end. */
  private afterCr = false;

  /** Feeds a chunk; returns the data of the events it completes. */
  push(chunk: Uint8Array): string[] {
    const buffer = this.buffer + this.decoder.decode(chunk, { stream: true });
    const events: string[] = [];
    let start = 0;
    if (this.afterCr && buffer.length > 0) {
      if (buffer.charCodeAt(0) === 10) start = 1;
      this.afterCr = false;
    }
    let cr = buffer.indexOf("\r", start);
    for (;;) {
      if (cr !== -1 && cr < start) cr = buffer.indexOf("\r", start);
      const lf = buffer.indexOf("\n", start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      const line = buffer.slice(start, end);
      start = end + 1;
      if (end === cr) {
        if (start === buffer.length) this.afterCr = true;
        else if (buffer.charCodeAt(start) === 10) start += 1;
      }
      if (line === "") {
        if (this.data.length > 0)
          events.push(this.data.length === 1 ? (this.data[0] ?? "") : this.data.join("\n"));
        this.data = [];
      } else if (line.startsWith("data:")) {
        this.data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start);
    return events;
  }

  /** At the end of the stream: the data of an event left without its blank line, if any. */
  end(): string[] {
    const events = this.data.length > 0 ? [this.data.join("\n")] : [];
    this.data = [];
    return events;
  }
}

/**
 * Yields each event's data (multi-line data joined by "\n"); comments and other fields are skipped.
 */
export async function* sseData(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const reader = body.getReader();
  const parser = new SseParser();
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(value);
    }
    yield* parser.end();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
