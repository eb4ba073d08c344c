// Writes the MNIST split as flat binaries for scripts/digits/train.py (Python cannot read the
// mnist package's split module): <cache>/{train,validation,test}.f32 ([n, 784] float32, ink = 1)
// and .u8 labels. Validation is carved out of the training part (see config.mjs).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadMnistSplit } from "../lib/mnist-split.mjs";
import { CACHE_DIR, VALIDATION_PER_DIGIT } from "./config.mjs";

/**
 * Training digits split into fit / validation: per label, the last VALIDATION_PER_DIGIT are
 * validation.
 */
export function carveValidation(train) {
  const seen = new Map();
  const totals = new Map();
  for (const { label } of train) totals.set(label, (totals.get(label) ?? 0) + 1);
  const fit = [];
  const validation = [];
  for (const digit of train) {
    const index = seen.get(digit.label) ?? 0;
    seen.set(digit.label, index + 1);
    (index >= totals.get(digit.label) - VALIDATION_PER_DIGIT ? validation : fit).push(digit);
  }
  return { fit, validation };
}

function write(name, digits) {
  const pixels = new Float32Array(digits.length * 784);
  digits.forEach((d, i) => pixels.set(d.pixels, i * 784));
  writeFileSync(join(CACHE_DIR, `${name}.f32`), pixels);
  writeFileSync(join(CACHE_DIR, `${name}.u8`), Uint8Array.from(digits.map((d) => d.label)));
  console.log(`${name}: ${digits.length} digits -> ${CACHE_DIR}/${name}.{f32,u8}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  mkdirSync(CACHE_DIR, { recursive: true });
  const { train, test } = loadMnistSplit();
  const { fit, validation } = carveValidation(train);
  write("fit", fit);
  write("validation", validation);
  write("train", train);
  write("test", test);
}
