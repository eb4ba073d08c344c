// Reads a JPEG's frame dimensions from its markers without decoding: SOI, then marker segments up
// to the first SOFn, whose header holds height and width.
import { ImageError } from "./image-error";
import type { ImageLimits } from "./limits";

export function hasJpegSignature(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}

/** SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** The frame's width and height, checked against the limits; throws ImageError. */
export function readJpegSize(
  bytes: Uint8Array,
  limits: ImageLimits,
): { width: number; height: number } {
  if (!hasJpegSignature(bytes)) throw new ImageError("corrupt", "Not a JPEG file (no SOI marker)");
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff)
      throw new ImageError("corrupt", `JPEG marker expected at byte ${offset}`);
    const marker = bytes[offset + 1] ?? 0;
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) break; // EOI or SOS before any frame header
    const length = ((bytes[offset + 2] ?? 0) << 8) | (bytes[offset + 3] ?? 0);
    if (length < 2)
      throw new ImageError("corrupt", `JPEG segment length ${length} at byte ${offset}`);
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) break;
      const height = ((bytes[offset + 5] ?? 0) << 8) | (bytes[offset + 6] ?? 0);
      const width = ((bytes[offset + 7] ?? 0) << 8) | (bytes[offset + 8] ?? 0);
      if (width === 0 || height === 0)
        throw new ImageError(
          "corrupt",
          `JPEG declares an empty or undefined-height image (${width}x${height})`,
        );
      if (width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels) {
        throw new ImageError(
          "too_large",
          `JPEG declares ${width}x${height} pixels; at most ${limits.maxSide} ` +
            `a side and ${limits.maxPixels} pixels are decoded`,
        );
      }
      return { width, height };
    }
    offset += 2 + length;
  }
  throw new ImageError("corrupt", "JPEG is truncated or has no frame header (SOFn)");
}
