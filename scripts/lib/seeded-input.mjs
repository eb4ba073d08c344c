// A reproducible TabFormer-like model input for benchmarks and compatibility checks:
// sparse one-hot columns (~5% ones) and the last two columns (Time, Amount) in [0, 1).

/** mulberry32: a 32-bit PRNG that any language reproduces from the seed. */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Float32 data for a [steps, batch, width] window tensor. */
export function tabFormerLikeInput(steps, batch, width, seed) {
  const random = mulberry32(seed);
  return Float32Array.from({ length: steps * batch * width }, (_, i) =>
    i % width >= width - 2 ? random() : random() < 0.05 ? 1 : 0,
  );
}
