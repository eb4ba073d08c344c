// Image bytes → a luminance plane, with pure-JS decoders that run in workerd (fast-png, jpeg-js),
// the declared dimensions checked against the limits before any decoding.
import { decode as decodePngFile } from "fast-png";
import { decode as decodeJpegFile } from "jpeg-js";
import { pngLuma, rgbLuma } from "./grayscale";
import { ImageError } from "./image-error";
import { inflatedSize } from "./inflate-bound";
import { hasJpegSignature, readJpegSize } from "./jpeg-header";
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from "./limits";
import { hasPngSignature, readPngLayout } from "./png-header";

export type ImageFormat = "png" | "jpeg";

export interface GrayImage {
  format: ImageFormat;
  width: number;
  height: number;
  /** Row-major luminance in [0, 1]: 0 black, 1 white (transparency composited over white). */
  luma: Float32Array;
}

/** The image format of some bytes by their signature, or undefined. */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (hasPngSignature(bytes)) return "png";
  if (hasJpegSignature(bytes)) return "jpeg";
  return undefined;
}

async function decodePng(bytes: Uint8Array, limits: ImageLimits): Promise<GrayImage> {
  const layout = readPngLayout(bytes, limits);
  const inflated = await inflatedSize(layout.zlib, layout.rawBytes);
  if (inflated < layout.rawBytes) {
    throw new ImageError(
      "corrupt",
      `PNG image data is truncated: ${inflated} of ${layout.rawBytes} bytes`,
    );
  }
  try {
    const png = decodePngFile(layout.sanitized);
    return {
      format: "png",
      width: png.width,
      height: png.height,
      luma: pngLuma(png, layout.colorType),
    };
  } catch (error) {
    throw new ImageError(
      "corrupt",
      `PNG could not be decoded: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

function decodeJpeg(bytes: Uint8Array, limits: ImageLimits): GrayImage {
  const { width, height } = readJpegSize(bytes, limits);
  try {
    const jpeg = decodeJpegFile(bytes, {
      useTArray: true,
      formatAsRGBA: false,
      // A truncated scan is an error, not a gray-filled image.
      tolerantDecoding: false,
      maxResolutionInMP: limits.maxPixels / 1e6,
      // Coefficient blocks + output for the largest accepted image, with headroom.
      maxMemoryUsageInMB: Math.ceil((limits.maxPixels * 12) / 2 ** 20) + 16,
    });
    if (jpeg.width !== width || jpeg.height !== height)
      throw new Error(`decoded ${jpeg.width}x${jpeg.height}, header said ${width}x${height}`);
    return { format: "jpeg", width, height, luma: rgbLuma(jpeg.data, width, height) };
  } catch (error) {
    throw new ImageError(
      "corrupt",
      `JPEG could not be decoded: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/**
 * Decodes PNG or JPEG bytes to luminance; throws ImageError (too_large, unsupported, corrupt).
 * Bytes with no known signature are "unsupported", or "corrupt" when the caller declared them
 * an image (a Content-Type of image/png on random bytes is a broken image, not another type).
 *
 * The format is sniffed from the bytes (a Content-Type may lie), and the declared dimensions are
 * checked against the limits before any decoding: a PNG's IDAT stream is also inflated once with a
 * ceiling, so it cannot expand past what its header declares before fast-png inflates it for real.
 */
export async function decodeImage(
  bytes: Uint8Array,
  limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
  declaredImage = false,
): Promise<GrayImage> {
  const format = sniffImageFormat(bytes);
  if (format === "png") return decodePng(bytes, limits);
  if (format === "jpeg") return decodeJpeg(bytes, limits);
  if (declaredImage)
    throw new ImageError(
      "corrupt",
      "The bytes are not a PNG or JPEG image (no PNG signature or JPEG SOI marker)",
    );
  throw new ImageError("unsupported", "Not a PNG or JPEG image (unrecognized file signature)");
}
