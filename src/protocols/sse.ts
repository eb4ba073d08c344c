// Server-sent events, read side: splits a byte stream into the `data:` payloads of its
// events (WHATWG EventSource parsing, reduced to what vLLM and OpenAI send). It runs once
// per streamed token: bytes are decoded here (a streaming TextDecoder) rather than through
// a TextDecoderStream, whose extra stream hop per chunk cost the edge more CPU than
// everything else it does per token (scripts/llm/relay-worker.js measures such hops).

/** Yields each event's data (multi-line data joined by "\n"); comments and other fields are skipped. */
export async function* sseData(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  /** The last chunk ended in "\r": a "\n" starting the next one belongs to that line end. */
  let afterCr = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let start = 0;
      if (afterCr && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 10) start = 1;
        afterCr = false;
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
          if (start === buffer.length) afterCr = true;
          else if (buffer.charCodeAt(start) === 10) start += 1;
        }
        if (line === "") {
          if (data.length > 0) yield data.length === 1 ? (data[0] ?? "") : data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) {
          data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        }
      }
      buffer = start === 0 ? buffer : buffer.slice(start);
    }
    if (data.length > 0) yield data.join("\n");
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
