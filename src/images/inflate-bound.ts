// Inflates a zlib stream with a ceiling on the output: the stream is cancelled as soon as
// more than `maxBytes` come out, so a few compressed bytes that expand to gigabytes (a
// deflate bomb) are refused after at most one chunk over the ceiling.
import { ImageError } from "./image-error";

/** The inflated size of `zlib` data if it is at most `maxBytes`; throws ImageError otherwise. */
export async function inflatedSize(zlib: Uint8Array, maxBytes: number): Promise<number> {
  const stream = new Blob([zlib]).stream().pipeThrough(new DecompressionStream("deflate"));
  const reader = stream.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return total;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new ImageError(
          "too_large",
          `Image data inflates to more than the ${maxBytes} bytes its header declares`,
        );
      }
    }
  } catch (error) {
    if (error instanceof ImageError) throw error;
    throw new ImageError(
      "corrupt",
      "Image data is not a valid zlib stream (truncated or corrupt)",
      { cause: error },
    );
  } finally {
    reader.releaseLock();
  }
}
