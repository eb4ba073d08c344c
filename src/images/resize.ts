// Separable resampling with a triangle (bilinear) filter whose support widens with the downscale
// factor, so shrinking averages every input pixel (PIL's antialiased "bilinear").

/** Weights of each output coordinate over the input axis: [start, weights] per output pixel. */
function axisWeights(
  inSize: number,
  outSize: number,
): Array<{ start: number; weights: Float32Array }> {
  const scale = inSize / outSize;
  const support = Math.max(1, scale);
  return Array.from({ length: outSize }, (_, o) => {
    const centre = (o + 0.5) * scale;
    const start = Math.max(0, Math.floor(centre - support));
    const end = Math.min(inSize, Math.ceil(centre + support));
    const weights = new Float32Array(end - start);
    let total = 0;
    for (let i = start; i < end; i++) {
      const w = Math.max(0, 1 - Math.abs((i + 0.5 - centre) / support));
      weights[i - start] = w;
      total += w;
    }
    if (total > 0) for (let i = 0; i < weights.length; i++) weights[i] = (weights[i] ?? 0) / total;
    return { start, weights };
  });
}

/** Resizes a row-major single-channel image to outWidth × outHeight. */
export function resize(
  pixels: Float32Array,
  width: number,
  height: number,
  outWidth: number,
  outHeight: number,
): Float32Array {
  const columns = axisWeights(width, outWidth);
  const rows = axisWeights(height, outHeight);
  const horizontal = new Float32Array(outWidth * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < outWidth; x++) {
      const { start, weights } = columns[x]!;
      let sum = 0;
      for (let k = 0; k < weights.length; k++)
        sum += (weights[k] ?? 0) * (pixels[y * width + start + k] ?? 0);
      horizontal[y * outWidth + x] = sum;
    }
  }
  const out = new Float32Array(outWidth * outHeight);
  for (let y = 0; y < outHeight; y++) {
    const { start, weights } = rows[y]!;
    for (let x = 0; x < outWidth; x++) {
      let sum = 0;
      for (let k = 0; k < weights.length; k++)
        sum += (weights[k] ?? 0) * (horizontal[(start + k) * outWidth + x] ?? 0);
      out[y * outWidth + x] = sum;
    }
  }
  return out;
}
