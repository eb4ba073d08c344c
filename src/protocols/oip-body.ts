// Reads an Open Inference Protocol request body as clients send it: JSON whatever the Content-Type
// says, optionally compressed, optionally followed by Triton binary tensor data.
import { ServiceError } from "../errors/service-error";
import { parseBoundedJson } from "./bounded-json";

export interface OipBody {
  /** The parsed JSON part (undefined for an empty body). */
  json: unknown;
  /** Bytes after the JSON header: the binary tensor data, in input order. */
  binary: Uint8Array;
}

export const HEADER_LENGTH = "inference-header-content-length";

/** The limit when none is configured: wrangler.jsonc's MAX_BODY_BYTES default. */
const DEFAULT_MAX_BYTES = 1_048_576;

function tooLarge(maxBytes: number, inflated: boolean): ServiceError {
  const what = inflated
    ? "The request body inflates to more than"
    : "The request body is over the limit of";
  return new ServiceError(413, "payload_too_large", `${what} ${maxBytes} bytes`);
}

function decoderFor(request: Request): DecompressionStream | undefined {
  const encoding = (request.headers.get("content-encoding") ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return undefined;
  // "deflate" is the zlib format (RFC 9110 §8.4.1.2), which is what DecompressionStream reads.
  if (encoding === "gzip" || encoding === "x-gzip") return new DecompressionStream("gzip");
  if (encoding === "deflate") return new DecompressionStream("deflate");
  throw new ServiceError(
    415,
    "unsupported_media_type",
    `Content-Encoding "${encoding}" is not supported; send gzip, deflate or identity`,
    {
      field: "headers.content-encoding",
      headers: { "accept-encoding": "gzip, deflate" },
    },
  );
}

/** Collects a stream, failing with `onOverflow` as soon as it passes maxBytes. */
async function collect(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  onOverflow: () => ServiceError,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw onOverflow();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

async function readBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes, false);
  const decoder = decoderFor(request);
  if (request.body === null) return new Uint8Array(0);
  if (decoder === undefined)
    return collect(request.body, maxBytes, () => tooLarge(maxBytes, false));
  // Count the compressed bytes as they arrive, then the inflated ones.
  let raw = 0;
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        raw += chunk.byteLength;
        if (raw > maxBytes) controller.error(tooLarge(maxBytes, false));
        else controller.enqueue(chunk);
      },
    }),
  );
  try {
    return await collect(counted.pipeThrough(decoder), maxBytes, () => tooLarge(maxBytes, true));
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError(
      400,
      "invalid_request",
      `The request body is not valid ${request.headers.get("content-encoding")} data`,
      {
        field: "body",
        cause: error,
      },
    );
  }
}

function headerLength(request: Request, total: number): number | undefined {
  const value = request.headers.get(HEADER_LENGTH);
  if (value === null) return undefined;
  const length = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(length) || length > total) {
    throw new ServiceError(
      400,
      "invalid_request",
      "Inference-Header-Content-Length must be a byte " +
        `count within the ${total}-byte body, got "${value}"`,
      {
        field: `headers.${HEADER_LENGTH}`,
      },
    );
  }
  return length;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads, inflates, splits and parses an OIP request body (pure over the Request).
 *
 * JSON whatever the Content-Type says, as Triton reads it (its Python client sends none, curl -d
 * sends a form type, fetch a text type), optionally gzip/deflate compressed, optionally followed by
 * binary tensor data whose JSON header length is given by `Inference-Header-Content-Length`. Raw
 * and inflated sizes are both bounded.
 */
export async function readOipBody(
  request: Request,
  options: { maxBytes: number },
): Promise<OipBody> {
  // An unset or garbled limit (e.g. a missing MAX_BODY_BYTES) must not mean "no limit".
  const maxBytes =
    Number.isFinite(options.maxBytes) && options.maxBytes > 0
      ? options.maxBytes
      : DEFAULT_MAX_BYTES;
  const bytes = await readBytes(request, maxBytes);
  const split = headerLength(request, bytes.byteLength) ?? bytes.byteLength;
  let text: string;
  try {
    text = utf8.decode(bytes.subarray(0, split));
  } catch (error) {
    throw new ServiceError(
      400,
      "invalid_request",
      "The JSON header is not UTF-8 text (binary data needs Inference-Header-Content-Length)",
      {
        field: "body",
        cause: error,
      },
    );
  }
  return {
    json: text.trim() === "" ? undefined : parseBoundedJson(text),
    binary: bytes.subarray(split),
  };
}
