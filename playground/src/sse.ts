// Reads a text/event-stream answer as it arrives (eventsource-parser does the framing), so a
// POST can stream: EventSource itself only GETs. Aborting the signal cancels the body.
import { createParser, type EventSourceMessage } from "eventsource-parser";

/** Calls `onEvent` for each event of `response`'s body until the stream ends or is aborted. */
export async function readEvents(
  response: Response,
  onEvent: (event: EventSourceMessage) => void,
): Promise<void> {
  if (response.body === null) return;
  const parser = createParser({ onEvent });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
}
