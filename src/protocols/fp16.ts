// IEEE 754 half precision ↔ JavaScript numbers. FP16 tensors travel as their raw 16-bit
// patterns (a Uint16Array, as onnxruntime takes them); JSON carries them as numbers.

const scratch = new DataView(new ArrayBuffer(4));

/** The half-precision bit pattern nearest to a number (round to nearest even). */
export function toHalfBits(value: number): number {
  scratch.setFloat32(0, value);
  const bits = scratch.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa === 0 ? 0 : 0x200); // Inf / NaN
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00; // overflow → Inf
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign; // underflow → ±0
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    const half = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    return sign | (half + (rest > midpoint || (rest === midpoint && (half & 1) === 1) ? 1 : 0));
  }
  const half = sign | (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to Inf).
  return half + (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1) ? 1 : 0);
}

/** The number a half-precision bit pattern holds. */
export function fromHalfBits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : Number.NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Largest finite half-precision value: JSON FP16 numbers beyond it are refused. */
export const HALF_MAX = 65504;
