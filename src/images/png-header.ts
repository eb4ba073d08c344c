// Reads a PNG's chunk layout without decoding it: the IHDR checked against the limits, the IDAT
// zlib stream, and a copy holding only the chunks the decoder needs.
import { ImageError } from "./image-error";
import type { ImageLimits } from "./limits";

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;

/** Channels per colour type (0 gray, 2 RGB, 3 indexed, 4 gray+alpha, 6 RGBA). */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};
const KEPT = new Set(["IHDR", "PLTE", "tRNS", "IDAT", "IEND"]);

export interface PngLayout {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  interlaced: boolean;
  /** The IDAT chunks' data, concatenated: one zlib stream. */
  zlib: Uint8Array;
  /** Bytes the zlib stream must inflate to (filter bytes included). */
  rawBytes: number;
  /** The file with only IHDR, PLTE, tRNS, IDAT and IEND. */
  sanitized: Uint8Array;
}

export function hasPngSignature(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && PNG_SIGNATURE.every((byte, i) => bytes[i] === byte);
}

/** Scanline bytes (one filter byte per row) of a width × height pass. */
function passBytes(width: number, height: number, bitsPerPixel: number): number {
  if (width === 0 || height === 0) return 0;
  return height * (1 + Math.ceil((width * bitsPerPixel) / 8));
}

/** Adam7's seven passes: [x start, y start, x step, y step]. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

function rawBytesOf(
  width: number,
  height: number,
  bitsPerPixel: number,
  interlaced: boolean,
): number {
  if (!interlaced) return passBytes(width, height, bitsPerPixel);
  return ADAM7.reduce(
    (sum, [x0, y0, dx, dy]) =>
      sum + passBytes(Math.ceil((width - x0) / dx), Math.ceil((height - y0) / dy), bitsPerPixel),
    0,
  );
}

function checkIhdr(view: DataView, at: number, length: number, limits: ImageLimits) {
  if (length !== 13) throw new ImageError("corrupt", `PNG IHDR chunk is ${length} bytes, not 13`);
  const width = view.getUint32(at);
  const height = view.getUint32(at + 4);
  const depth = view.getUint8(at + 8);
  const colorType = view.getUint8(at + 9);
  if (width === 0 || height === 0)
    throw new ImageError("corrupt", `PNG declares an empty image (${width}x${height})`);
  if (width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels) {
    throw new ImageError(
      "too_large",
      `PNG declares ${width}x${height} pixels; at most ${limits.maxSide} ` +
        `a side and ${limits.maxPixels} pixels are decoded`,
    );
  }
  const channels = CHANNELS[colorType];
  if (channels === undefined || !(DEPTHS[colorType] ?? []).includes(depth)) {
    throw new ImageError(
      "corrupt",
      `PNG colour type ${colorType} with bit depth ${depth} is not valid`,
    );
  }
  if (view.getUint8(at + 10) !== 0 || view.getUint8(at + 11) !== 0)
    throw new ImageError("corrupt", "PNG compression or filter method is not 0");
  const interlace = view.getUint8(at + 12);
  if (interlace > 1)
    throw new ImageError("corrupt", `PNG interlace method ${interlace} is not valid`);
  return {
    width,
    height,
    depth,
    colorType,
    interlaced: interlace === 1,
    rawBytes: rawBytesOf(width, height, depth * channels, interlace === 1),
  };
}

/**
 * The PNG's layout; throws ImageError ("too_large" before anything is allocated for pixels).
 *
 * The copy keeps IHDR, PLTE, tRNS, IDAT and IEND, so compressed ancillary chunks (iCCP, zTXt, iTXt)
 * are never inflated by the decoder.
 */
export function readPngLayout(bytes: Uint8Array, limits: ImageLimits): PngLayout {
  if (!hasPngSignature(bytes)) throw new ImageError("corrupt", "Not a PNG file (no PNG signature)");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: ReturnType<typeof checkIhdr> | undefined;
  const kept: Uint8Array[] = [bytes.subarray(0, 8)];
  const idat: Uint8Array[] = [];
  let offset = 8;
  let ended = false;
  while (!ended) {
    if (offset + 12 > bytes.length)
      throw new ImageError("corrupt", "PNG is truncated (a chunk is cut short or IEND is missing)");
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8));
    const end = offset + 12 + length;
    if (length > 0x7fffffff || end > bytes.length)
      throw new ImageError(
        "corrupt",
        `PNG is truncated (chunk ${JSON.stringify(type)} runs past the end)`,
      );
    if (header === undefined && type !== "IHDR")
      throw new ImageError("corrupt", "PNG does not start with an IHDR chunk");
    if (type === "IHDR") header = checkIhdr(view, offset + 8, length, limits);
    if (type === "IDAT") idat.push(bytes.subarray(offset + 8, offset + 8 + length));
    if (type === "IEND") ended = true;
    if (KEPT.has(type)) kept.push(bytes.subarray(offset, end));
    offset = end;
  }
  if (header === undefined || idat.length === 0)
    throw new ImageError("corrupt", "PNG has no image data (IDAT)");
  return { ...header, zlib: concat(idat), sanitized: concat(kept) };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
