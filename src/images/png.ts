// PNG encoding for images made at the edge (8-bit grayscale), through fast-png.
import { encode } from "fast-png";

/**
 * Encodes an 8-bit grayscale image (row-major, `width * height` bytes) as a PNG file.
 * Throws a RangeError when the pixel count does not match the dimensions.
 */
export function encodePng(gray: Uint8Array, width: number, height: number): Uint8Array {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`PNG dimensions must be positive integers, got ${width}x${height}`);
  }
  if (gray.length !== width * height) {
    throw new RangeError(
      `expected ${width * height} gray bytes for ${width}x${height}, got ${gray.length}`,
    );
  }
  return encode({ width, height, data: gray, depth: 8, channels: 1 });
}
