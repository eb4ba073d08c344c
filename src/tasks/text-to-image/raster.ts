// The pipeline's float pixels as an output raster: latent previews through the manifest's linear
// factors, [0, 1] floats to bytes, and a nearest-neighbour upscale.

/** pixel ≈ bias + Σ_c factors[c] · x̂_0[c] at latent resolution, clamped to [0, 1]. */
export function previewPixels(
  latent: Float32Array,
  channels: number,
  height: number,
  width: number,
  factors: readonly number[],
  bias: number,
): Float32Array {
  const plane = height * width;
  const out = new Float32Array(plane);
  for (let p = 0; p < plane; p += 1) {
    let value = bias;
    for (let c = 0; c < channels; c += 1) value += (factors[c] ?? 0) * (latent[c * plane + p] ?? 0);
    out[p] = Math.min(1, Math.max(0, value));
  }
  return out;
}

/** [0, 1] floats → bytes (round half up, clamped). */
export function toBytes(pixels: Float32Array): Uint8Array {
  const out = new Uint8Array(pixels.length);
  for (let i = 0; i < pixels.length; i += 1)
    out[i] = Math.round(Math.min(1, Math.max(0, pixels[i] ?? 0)) * 255);
  return out;
}

/**
 * Nearest-neighbour resize of a height × width raster to size × size.
 *
 * The supported sizes are whole multiples of the model's resolution, so every source pixel becomes
 * a square block: no resampling blur, and cheap.
 */
export function upscale(gray: Uint8Array, height: number, width: number, size: number): Uint8Array {
  if (height === size && width === size) return gray;
  const out = new Uint8Array(size * size);
  for (let y = 0; y < size; y += 1) {
    const row = Math.min(height - 1, Math.floor((y * height) / size)) * width;
    for (let x = 0; x < size; x += 1)
      out[y * size + x] = gray[row + Math.min(width - 1, Math.floor((x * width) / size))] ?? 0;
  }
  return out;
}
