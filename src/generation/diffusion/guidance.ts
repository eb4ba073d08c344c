// Classifier-free guidance: ε = ε_uncond + g · (ε_cond − ε_uncond), the two predictions
// coming from one UNet batch (the conditional rows and the unconditional ones).

/** The guided noise prediction of one image. */
export function guide(cond: Float32Array, uncond: Float32Array, scale: number): Float32Array {
  const out = new Float32Array(cond.length);
  for (let i = 0; i < cond.length; i += 1) {
    const u = uncond[i] ?? 0;
    out[i] = u + scale * ((cond[i] ?? 0) - u);
  }
  return out;
}
