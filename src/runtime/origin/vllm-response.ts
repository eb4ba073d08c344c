// A vLLM origin's response outside the token loop: its refusal before the stream, the usage
// chunk read just after the finish, and the tail drained so that workerd pools the connection.
import { ServiceError } from "../../errors/service-error";
import type { SseParser } from "../../protocols/sse";
import { ErrorEvent, errorMessage } from "../../protocols/vllm-completions";
import type { GenerationStep } from "../runtime";
import { readTail, upstream } from "./vllm-steps";

async function reason(response: Response): Promise<string> {
  const text = (await response.text().catch(() => "")).slice(0, 4000);
  try {
    const parsed = ErrorEvent.safeParse(JSON.parse(text));
    if (parsed.success) return errorMessage(parsed.data).slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 200) || `HTTP ${response.status}`;
}

/** A refusal before the stream: the client's status where it is the client's to act on. */
export async function refusal(response: Response): Promise<ServiceError> {
  const detail = await reason(response);
  const retryAfter = response.headers.get("retry-after") ?? "1";
  if (response.status === 429)
    return new ServiceError(429, "rate_limited", `The GPU origin is busy: ${detail}`, {
      headers: { "retry-after": retryAfter },
    });
  if (response.status === 503)
    return new ServiceError(
      503,
      "upstream_unavailable",
      `The GPU origin is unavailable: ${detail}`,
      { headers: { "retry-after": retryAfter } },
    );
  if (response.status === 400) {
    // A vLLM started with a lower --max-logprobs refuses what the edge accepts (up to 20).
    if (/logprobs/i.test(detail))
      return new ServiceError(
        400,
        "invalid_request",
        `The GPU origin refused the request: ${detail}`,
        { field: "logprobs" },
      );
    const code = /context|maximum|too long|max_model_len/i.test(detail)
      ? "context_length_exceeded"
      : "invalid_request";
    return new ServiceError(400, code, `The GPU origin refused the request: ${detail}`, {
      field: code === "context_length_exceeded" ? "messages" : "body",
    });
  }
  return upstream(`The GPU origin failed (${response.status}: ${detail})`);
}

/** After the finish: at most this much of the origin's tail is read to free its connection. */
const DRAIN_MAX_BYTES = 64 * 1024;
const DRAIN_TIMEOUT_MS = 5_000;
/**
 * After the finish chunk, how long the usage chunk behind it is waited for (vLLM writes both at
 * once).
 */
const USAGE_WAIT_MS = 250;

/** Reads a body to its end (bounded in bytes and time), so that workerd can pool its connection. */
export async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), DRAIN_TIMEOUT_MS);
  try {
    for (let bytes = 0; bytes <= DRAIN_MAX_BYTES; ) {
      const { done, value } = await reader.read();
      if (done) return;
      bytes += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // a tail that fails only costs the connection
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The finish came without the usage chunk that vLLM writes right after it: it is read
 * from the next reads, for at most USAGE_WAIT_MS, so that the client's usage can say how
 * much of the prompt the origin's cache served. A tail that fails or is late only leaves
 * that count out; the rest of the body is drained afterwards as usual.
 */
export async function awaitTail(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  parser: SseParser,
  finished: GenerationStep,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">(
    (resolve) => (timer = setTimeout(() => resolve("late"), USAGE_WAIT_MS)),
  );
  try {
    for (;;) {
      const read = await Promise.race([reader.read(), late]);
      if (read === "late") return;
      if (readTail(read.done ? parser.end() : parser.push(read.value), finished) || read.done)
        return;
    }
  } catch {
    // the tail only adds the cached-token count
  } finally {
    clearTimeout(timer);
  }
}
