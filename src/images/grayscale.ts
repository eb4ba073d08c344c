// Decoded pixels → one luminance plane in [0, 1] (0 black, 1 white). Colour uses Rec. 601
// weights (what PIL's convert("L") and most "grayscale" buttons use); transparent pixels are
// composited over white, as a browser shows a PNG on a white page.
import type { DecodedPng } from "fast-png";

const R = 0.299;
const G = 0.587;
const B = 0.114;

/** Row-major sample reader for any PNG bit depth (1, 2, 4 bits packed per row; 8; 16). */
function sampleReader(png: DecodedPng): (row: number, index: number) => number {
  const { data, depth, width, channels } = png;
  if (depth >= 8) return (row, index) => data[row * width * channels + index] ?? 0;
  const bytesPerLine = Math.ceil((depth * channels * width) / 8);
  const mask = (1 << depth) - 1;
  return (row, index) => {
    const bit = index * depth;
    const byte = data[row * bytesPerLine + (bit >> 3)] ?? 0;
    return (byte >> (8 - depth - (bit & 7))) & mask;
  };
}

/**
 * Luminance of a decoded PNG; `colorType` as in its IHDR (0 gray, 2 RGB, 3 indexed, 4 gray+alpha, 6
 * RGBA).
 */
export function pngLuma(png: DecodedPng, colorType: number): Float32Array {
  const { width, height, channels, depth } = png;
  const max = colorType === 3 ? 1 : (1 << depth) - 1;
  const sample = sampleReader(png);
  const key = png.transparency; // tRNS of a gray or RGB image: the one fully transparent colour
  const luma = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const first = x * channels;
      let value: number;
      let alpha = 1;
      if (colorType === 3) {
        const entry = png.palette?.[sample(y, x)] ?? [0, 0, 0];
        value = (R * (entry[0] ?? 0) + G * (entry[1] ?? 0) + B * (entry[2] ?? 0)) / 255;
        alpha = (entry[3] ?? 255) / 255;
      } else if (channels <= 2) {
        const gray = sample(y, first);
        value = gray / max;
        if (channels === 2) alpha = sample(y, first + 1) / max;
        else if (key !== undefined && key.length >= 1 && gray === key[0]) alpha = 0;
      } else {
        const r = sample(y, first);
        const g = sample(y, first + 1);
        const b = sample(y, first + 2);
        value = (R * r + G * g + B * b) / max;
        if (channels === 4) alpha = sample(y, first + 3) / max;
        else if (
          key !== undefined &&
          key.length >= 3 &&
          r === key[0] &&
          g === key[1] &&
          b === key[2]
        )
          alpha = 0;
      }
      luma[y * width + x] = value * alpha + (1 - alpha);
    }
  }
  return luma;
}

/**
 * Luminance of packed 8-bit RGB (jpeg-js with formatAsRGBA: false; gray JPEGs come out as R = G =
 * B).
 */
export function rgbLuma(rgb: Uint8Array, width: number, height: number): Float32Array {
  const luma = new Float32Array(width * height);
  for (let i = 0; i < luma.length; i++) {
    luma[i] = (R * (rgb[3 * i] ?? 0) + G * (rgb[3 * i + 1] ?? 0) + B * (rgb[3 * i + 2] ?? 0)) / 255;
  }
  return luma;
}
