// The closed loop on the shipped files (issue 11, outcome 6), with onnxruntime-node: for each digit
// 0–9 and seeds 0..SEEDS-1, the prompt (the digit's training — resp. held-out — phrasings in turn:
// seed i → phrasing i mod count, as scripts/diffusion/evaluate.py) is tokenized with
// models/digit-diffusion/tokenizer.json, the three ONNX graphs run the manifest's default loop
// (DDIM eta 0 or Euler, "trailing" spacing, classifier-free guidance with both halves in one batch,
// the contract's seeded noise), and the digit classifier's graph labels each image. Prints accuracy
// per phrasing set and per digit.
//
//   node scripts/diffusion/closed-loop.mjs [--classifier models/digit-classifier] [--graph model]
//     [--seeds 50] [--out file.json]
//
// The scheduler maths is written here from the contract (huggingface/diffusers scheduling_ddim.py /
// scheduling_euler_discrete.py, cited): it is the scripts' independent copy, not the service's
// src/generation/diffusion.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import ort from "onnxruntime-node";
import { allPhrasings, readHeldOut } from "./phrasings.mjs";

const { values } = parseArgs({
  options: {
    classifier: { type: "string", default: "models/digit-classifier" },
    graph: { type: "string", default: "model" },
    seeds: { type: "string", default: "50" },
    model: { type: "string", default: "models/digit-diffusion" },
    out: { type: "string" },
  },
});
const SEEDS = Number(values.seeds);
const dir = values.model;
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const { diffusion } = manifest;
const classifierManifest = JSON.parse(
  readFileSync(join(values.classifier, "manifest.json"), "utf8"),
);
const session = async (path) => ort.InferenceSession.create(readFileSync(path));
const graphs = {};
for (const role of ["text_encoder", "unet", "vae_decoder"])
  graphs[role] = await session(join(dir, manifest.graphs[role].file));
const classifier = await session(
  join(values.classifier, classifierManifest.graphs[values.graph].file),
);
const tokenizer = new Tokenizer(
  JSON.parse(readFileSync(join(dir, manifest.tokenizer.file), "utf8")),
  JSON.parse(readFileSync(join(dir, manifest.tokenizer.config), "utf8")),
);

// --- the contract's seeded noise (src/generation/prng.ts createPrng, re-stated) ---
function mix32(v) {
  let z = v >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}
const rotl = (x, k) => ((x << k) | (x >>> (32 - k))) >>> 0;
function prng(seed) {
  const lo = ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
  const hi = Math.floor(seed / 2 ** 32) >>> 0;
  let s = (lo ^ mix32(hi)) >>> 0;
  const fill = () => mix32((s = (s + 0x9e3779b9) >>> 0));
  let [a, b, c, d] = [fill(), fill(), fill(), fill()];
  if ((a | b | c | d) === 0) a = 1;
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c = (c ^ a) >>> 0;
    d = (d ^ b) >>> 0;
    b = (b ^ c) >>> 0;
    a = (a ^ d) >>> 0;
    c = (c ^ t) >>> 0;
    d = rotl(d, 11);
    return (result >>> 8) / 2 ** 24;
  };
}
function noise(seed, count) {
  const next = prng(seed);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i += 2) {
    const u1 = next();
    const u2 = next();
    const r = Math.sqrt(-2 * Math.log(1 - u1));
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < count) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

// --- schedule ---
const sched = diffusion.scheduler;
const N = sched.numTrainTimesteps;
const acp = new Float64Array(N);
for (let i = 0, p = 1; i < N; i++) {
  const beta =
    sched.betaSchedule === "linear"
      ? sched.betaStart + ((sched.betaEnd - sched.betaStart) * i) / (N - 1)
      : (Math.sqrt(sched.betaStart) +
          ((Math.sqrt(sched.betaEnd) - Math.sqrt(sched.betaStart)) * i) / (N - 1)) **
        2;
  p *= 1 - beta;
  acp[i] = p;
}
if (sched.timestepSpacing !== "trailing")
  throw new Error('this script implements "trailing" spacing only');
const roundHalfEven = (x) => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));
const timesteps = (steps) =>
  Array.from({ length: steps }, (_, k) => roundHalfEven(N - (k * N) / steps) - 1);

const latentSize = diffusion.latentShape.reduce((a, b) => a * b, 1);
const f32 = (data, shape) => new ort.Tensor("float32", data, shape);
const i64 = (data, shape) =>
  new ort.Tensor(
    "int64",
    BigInt64Array.from(data, (v) => BigInt(v)),
    shape,
  );
const first = async (s, feeds) => Object.values(await s.run(feeds))[0].data;

async function generate(prompts, seeds, { steps, guidanceScale: g, scheduler }) {
  const b = prompts.length;
  const L = diffusion.promptLength;
  const ids = new Array(2 * b * L).fill(diffusion.padTokenId);
  const mask = new Array(2 * b * L).fill(0);
  prompts.forEach((text, i) => {
    const row = tokenizer.encode(text, { add_special_tokens: false }).ids;
    if (row.length > L) throw new Error(`"${text}" is longer than ${L} tokens`);
    row.forEach((id, j) => {
      ids[(b + i) * L + j] = id;
      mask[(b + i) * L + j] = 1;
    });
  });
  const emb = await first(graphs.text_encoder, {
    input_ids: i64(ids, [2 * b, L]),
    attention_mask: i64(mask, [2 * b, L]),
  });
  const E = emb.length / (2 * b);
  const ts = timesteps(steps);
  const sigmas = [...ts.map((t) => Math.sqrt((1 - acp[t]) / acp[t])), 0];
  const init = scheduler === "ddim" ? 1 : Math.max(...sigmas);
  const n = b * latentSize;
  let x = new Float32Array(n);
  seeds.forEach((seed, i) =>
    x.set(
      noise(seed, latentSize).map((v) => v * init),
      i * latentSize,
    ),
  );
  const shape = [2 * b, ...diffusion.latentShape];
  const guided = async (modelIn, t) => {
    const doubled = new Float32Array(2 * n);
    doubled.set(modelIn, 0);
    doubled.set(modelIn, n);
    const eps = await first(graphs.unet, {
      sample: f32(doubled, shape),
      timestep: f32(new Float32Array(2 * b).fill(t), [2 * b]),
      text_embeds: f32(emb, [2 * b, E]),
    });
    return Float64Array.from({ length: n }, (_, i) => eps[i] + g * (eps[n + i] - eps[i]));
  };
  for (const [k, t] of ts.entries()) {
    if (scheduler === "ddim") {
      const eps = await guided(x, t);
      const prev = t - Math.floor(N / steps);
      const aT = acp[t];
      const aPrev = prev >= 0 ? acp[prev] : sched.setAlphaToOne ? 1 : acp[0];
      x = x.map((v, i) => {
        const x0 = (v - Math.sqrt(1 - aT) * eps[i]) / Math.sqrt(aT);
        return Math.sqrt(aPrev) * x0 + Math.sqrt(1 - aPrev) * eps[i];
      });
    } else {
      const sigma = sigmas[k];
      const eps = await guided(
        x.map((v) => v / Math.sqrt(sigma * sigma + 1)),
        t,
      );
      x = x.map((v, i) => v + eps[i] * (sigmas[k + 1] - sigma));
    }
  }
  return first(graphs.vae_decoder, {
    latent: f32(
      x.map((v) => v / diffusion.scalingFactor),
      [b, ...diffusion.latentShape],
    ),
  });
}

const heldOut = new Set(readHeldOut().map((p) => p.text));
const phrasings = allPhrasings();
const started = Date.now();
const report = {
  runtime: `onnxruntime-node ${ort.env.versions?.common ?? ""}`.trim(),
  classifier: `${values.classifier} graph "${values.graph}"`,
  seeds: SEEDS,
};
for (const [name, held] of [
  ["training phrasings", false],
  ["held-out phrasings", true],
]) {
  let correct = 0;
  const perDigit = [];
  for (let digit = 0; digit <= 9; digit++) {
    const mine = phrasings
      .filter((p) => p.digit === digit && heldOut.has(p.text) === held)
      .map((p) => p.text);
    const prompts = Array.from({ length: SEEDS }, (_, s) => mine[s % mine.length]);
    const seeds = Array.from({ length: SEEDS }, (_, s) => s);
    const images = await generate(prompts, seeds, diffusion.defaults);
    const logits = await first(classifier, {
      [classifier.inputNames[0]]: f32(images, [SEEDS, 1, 28, 28]),
    });
    let ok = 0;
    for (let i = 0; i < SEEDS; i++) {
      const row = Array.from(logits.subarray(i * 10, i * 10 + 10));
      if (row.indexOf(Math.max(...row)) === digit) ok += 1;
    }
    correct += ok;
    perDigit.push(ok / SEEDS);
  }
  report[held ? "heldOutPhrasings" : "trainingPhrasings"] = {
    accuracy: correct / (10 * SEEDS),
    perDigit: perDigit.map((a) => Number(a.toFixed(3))),
  };
  console.log(
    `${name}: accuracy ${(correct / (10 * SEEDS)).toFixed(4)} ` +
      `(${correct}/${10 * SEEDS}); per digit ${perDigit.map((a) => a.toFixed(2)).join(" ")}`,
  );
}
console.log(
  `classifier ${values.classifier} graph "${values.graph}"; ` +
    `${diffusion.defaults.scheduler}, ${diffusion.defaults.steps} steps, guidance ` +
    `${diffusion.defaults.guidanceScale}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
if (values.out)
  writeFileSync(
    values.out,
    `${JSON.stringify({ ...report, seconds: Math.round((Date.now() - started) / 100) / 10 }, null, 2)}` +
      "\n",
  );
