// Bounds on what the edge decodes. Checked against the header's declared dimensions before
// any pixel buffer is allocated or any data inflated, so a small file that declares a huge
// image (a decompression bomb) costs nothing.

export interface ImageLimits {
  /** Longest side accepted, in pixels. */
  maxSide: number;
  /** Most pixels accepted (width × height). */
  maxPixels: number;
}

/** 4096 px a side, 4 megapixels: a decoded 16-bit RGBA image of that size is 32 MiB, the
 * most one request may hold at once beside the ~20 MiB the models need in a 128 MB isolate. */
export const DEFAULT_IMAGE_LIMITS: ImageLimits = { maxSide: 4096, maxPixels: 4 * 1024 * 1024 };
