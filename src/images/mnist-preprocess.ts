// An image of one handwritten digit → the 28×28 "ink" plane a digit classifier reads, made the way
// MNIST itself was made.
import { resize } from "./resize";

export const MNIST_SIZE = 28;
export const MNIST_BOX = 20;

function median(values: number[]): number {
  const sorted = values.sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function borderValues(luma: Float32Array, width: number, height: number): number[] {
  const values: number[] = [];
  for (let x = 0; x < width; x++) values.push(luma[x] ?? 0, luma[(height - 1) * width + x] ?? 0);
  for (let y = 1; y < height - 1; y++)
    values.push(luma[y * width] ?? 0, luma[y * width + width - 1] ?? 0);
  return values;
}

/** Steps 1–2: luminance → ink in [0, 1] on a 0 background. */
export function toInk(luma: Float32Array, width: number, height: number): Float32Array {
  const background = median(borderValues(luma, width, height));
  const inverted = background > 0.5;
  const level = inverted ? 1 - background : background;
  const span = Math.max(1e-6, 1 - level);
  return luma.map((value) =>
    Math.min(1, Math.max(0, ((inverted ? 1 - value : value) - level) / span)),
  );
}

function boundingBox(ink: Float32Array, width: number, height: number) {
  let max = 0;
  for (const value of ink) max = Math.max(max, value);
  if (max === 0) return undefined;
  const threshold = 0.1 * max;
  let left = width,
    right = -1,
    top = height,
    bottom = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if ((ink[y * width + x] ?? 0) <= threshold) continue;
      left = Math.min(left, x);
      right = Math.max(right, x);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
  }
  return { left, top, width: right - left + 1, height: bottom - top + 1 };
}

function crop(
  ink: Float32Array,
  width: number,
  box: { left: number; top: number; width: number; height: number },
): Float32Array {
  const out = new Float32Array(box.width * box.height);
  for (let y = 0; y < box.height; y++)
    out.set(
      ink.subarray((box.top + y) * width + box.left, (box.top + y) * width + box.left + box.width),
      y * box.width,
    );
  return out;
}

/**
 * The 28×28 ink plane (row-major, in [0, 1]) of a digit image given as luminance.
 *
 * The digit's bounding box is fitted into 20×20 keeping its aspect ratio, antialiased, then placed
 * in 28×28 so that its centre of mass is the centre. The rule, step by step:
 * 1. Ink polarity: the median luminance of the image's outermost ring of pixels is its
 *    background; a light background (> 0.5) means dark ink, and the plane is inverted.
 * 2. Background level: ink = (value − background) / (1 − background), clamped to [0, 1], so
 *    grey paper reads as 0.
 * 3. An image already 28×28 is taken as it is after steps 1–2 (MNIST digits and the
 *    diffusion model's outputs are already framed that way; re-fitting would only blur them).
 * 4. Otherwise: bounding box of pixels with ink > 0.1 of the maximum; resized so its longer
 *    side is 20; pasted into 28×28 at the offset that puts its centre of mass at (14, 14)
 *    (clipped at the borders). A blank image gives an all-zero plane.
 */
export function mnistPixels(luma: Float32Array, width: number, height: number): Float32Array {
  const ink = toInk(luma, width, height);
  if (width === MNIST_SIZE && height === MNIST_SIZE) return ink;
  const out = new Float32Array(MNIST_SIZE * MNIST_SIZE);
  const box = boundingBox(ink, width, height);
  if (box === undefined) return out;
  const scale = MNIST_BOX / Math.max(box.width, box.height);
  const fitWidth = Math.max(1, Math.round(box.width * scale));
  const fitHeight = Math.max(1, Math.round(box.height * scale));
  const fitted = resize(crop(ink, width, box), box.width, box.height, fitWidth, fitHeight);
  let mass = 0,
    sumX = 0,
    sumY = 0;
  for (let y = 0; y < fitHeight; y++) {
    for (let x = 0; x < fitWidth; x++) {
      const value = fitted[y * fitWidth + x] ?? 0;
      mass += value;
      sumX += value * (x + 0.5);
      sumY += value * (y + 0.5);
    }
  }
  const offsetX = Math.round(MNIST_SIZE / 2 - (mass > 0 ? sumX / mass : fitWidth / 2));
  const offsetY = Math.round(MNIST_SIZE / 2 - (mass > 0 ? sumY / mass : fitHeight / 2));
  for (let y = 0; y < fitHeight; y++) {
    const row = y + offsetY;
    if (row < 0 || row >= MNIST_SIZE) continue;
    for (let x = 0; x < fitWidth; x++) {
      const column = x + offsetX;
      if (column >= 0 && column < MNIST_SIZE)
        out[row * MNIST_SIZE + column] = Math.min(1, Math.max(0, fitted[y * fitWidth + x] ?? 0));
    }
  }
  return out;
}
