// Types of mnist-split.mjs for the TypeScript scripts and tests that import it.
export interface Digit {
  pixels: Float32Array;
  label: number;
}
export const PIXELS: number;
export const HELD_OUT_PER_DIGIT: number;
export const SPLIT_DESCRIPTION: string;
export function loadDigitFile(digit: number): number[];
export function loadMnistSplit(): { train: Digit[]; test: Digit[] };
