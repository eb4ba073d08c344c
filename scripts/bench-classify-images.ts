// Image classification benchmark, side by side in one run on the same held-out digits: the
// edge's work per image (decode + MNIST-style preprocessing, src/images/, the code the Worker
// runs) against the model run (onnxruntime-web WASM INT8, the Worker's engine, batch 1, one
// thread), for a 28x28 PNG (a digit as MNIST ships it) and a 280x280 JPEG (the digit as dark
// ink on light paper, scaled 10x: what a phone photo crop looks like). Timed in Node: inside
// workerd, timers only advance on I/O, so Server-Timing cannot show sub-request CPU work.
// Usage: npm run bench:classify-images [-- --images 200]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { encode as encodeJpeg } from "jpeg-js";
import * as ort from "onnxruntime-web";
import { decodeImage } from "../src/images/decode";
import { mnistPixels } from "../src/images/mnist-preprocess";
import { encodePng } from "../src/images/png";
import { loadMnistSplit } from "./lib/mnist-split.mjs";
import { timeInterleaved } from "./lib/stats.mjs";

const { values: options } = parseArgs({ options: { images: { type: "string", default: "200" } } });
const IMAGES = Number(options.images);
const dir = "models/digit-classifier";
const manifest: { graphs: { model: { file: string } } } = JSON.parse(
  readFileSync(`${dir}/manifest.json`, "utf8"),
);

const digits = loadMnistSplit()
  .test.filter((_, i) => i % Math.floor(2000 / IMAGES) === 0)
  .slice(0, IMAGES);
const pngs = digits.map((d) =>
  encodePng(
    Uint8Array.from(d.pixels, (p) => Math.round(p * 255)),
    28,
    28,
  ),
);
const SCALE = 10;
const jpegs = digits.map((d) => {
  const size = 28 * SCALE;
  const rgba = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const ink = d.pixels[Math.floor(y / SCALE) * 28 + Math.floor(x / SCALE)] ?? 0;
      const value = Math.round(240 - 200 * ink);
      rgba.set([value, value, value, 255], (y * size + x) * 4);
    }
  }
  return new Uint8Array(encodeJpeg({ data: rgba, width: size, height: size }, 90).data);
});

ort.env.wasm.numThreads = 1;
const session = await ort.InferenceSession.create(
  readFileSync(`${dir}/${manifest.graphs.model.file}`),
  { executionProviders: ["wasm"], graphOptimizationLevel: "all" },
);
const planes = digits.map((d) => d.pixels);

const edgeWork = (files: Uint8Array[]) => async (i: number) => {
  const image = await decodeImage(files[i]!);
  return mnistPixels(image.luma, image.width, image.height);
};
const modelRun = async (i: number) =>
  session.run({ pixels: new ort.Tensor("float32", planes[i]!, [1, 1, 28, 28]) });

const [png, jpeg, model] = await timeInterleaved([edgeWork(pngs), edgeWork(jpegs), modelRun], {
  inputs: digits.length,
  block: 20,
  warmupMs: 2000,
});
const meanBytes = (files: Uint8Array[]) =>
  Math.round(files.reduce((sum, file) => sum + file.length, 0) / files.length);
const row = (name: string, s: { p50: number; p99: number }, ratio: string) =>
  console.log(`| ${name} | ${s.p50.toFixed(3)} | ${s.p99.toFixed(3)} | ${ratio} |`);
console.log(`${digits.length} held-out digits, batch 1, one thread, ms`);
console.log("| work per image | p50 | p99 | ratio (p50) to the model run |");
console.log("|---|---|---|---|");
row(
  `decode + preprocess: 28x28 PNG (mean ${meanBytes(pngs)} bytes)`,
  png!,
  `${(png!.p50 / model!.p50).toFixed(2)}x`,
);
row(
  `decode + preprocess: ${28 * SCALE}x${28 * SCALE} JPEG, ` +
    `dark ink on light paper (mean ${meanBytes(jpegs)} bytes)`,
  jpeg!,
  `${(jpeg!.p50 / model!.p50).toFixed(2)}x`,
);
row("model run: onnxruntime-web WASM INT8, [1, 1, 28, 28]", model!, "1.00x");
