// 8-bit grayscale PNG encoding with fast-png (pure JS, runs in workerd). A stand-in for
// image-classify's src/images/png.ts `encodePng` (same signature): swap at merge.
import { encode } from "fast-png";

/** A width × height 8-bit grayscale PNG of `gray` (row-major, one byte per pixel). */
export function encodePng(gray: Uint8Array, width: number, height: number): Uint8Array {
  if (gray.length !== width * height) throw new RangeError(`expected ${width * height} pixels, got ${gray.length}`);
  return encode({ width, height, data: gray, channels: 1, depth: 8 });
}
