#!/usr/bin/env node
// Optimizes a model's edge graph once, at build time, so the isolate need not: onnxruntime-node
// (the same ORT release as onnxruntime-web) applies the graph transformers up to "extended"
// (constant folding, redundant-node elimination, fusions; the hardware-independent levels)
// and saves the result beside the source graph; the manifest's graph then points at the
// optimized file (sha256 and size of what ships) and names its source. The edge creates
// sessions for such graphs with optimization disabled (src/runtime/wasm/ort.ts), which takes
// the optimizer — and the lazy compilation of its WASM code — out of the cold start.
//   node scripts/optimize-graphs.mjs models/spam-classifier [models/fraud-gru …] [--graph model]
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";

const { values: options, positionals: dirs } = parseArgs({
  allowPositionals: true,
  options: { graph: { type: "string", default: "model" } },
});
const LEVEL = "extended";
const version = JSON.parse(
  readFileSync("node_modules/onnxruntime-node/package.json", "utf8"),
).version;
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

for (const dir of dirs) {
  const manifestPath = join(dir, "manifest.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const graph = manifest.graphs[options.graph];
  if (graph === undefined) throw new Error(`${manifestPath}: no graph "${options.graph}"`);
  // Idempotent: an already optimized graph is rebuilt from its source.
  const sourceFile = graph.optimized?.source.file ?? graph.file;
  const sourceBytes = readFileSync(join(dir, sourceFile));
  if (graph.optimized !== undefined && sha256(sourceBytes) !== graph.optimized.source.sha256) {
    throw new Error(`${join(dir, sourceFile)} does not match the manifest's source sha256`);
  }
  const outFile = sourceFile.replace(/\.onnx$/, ".opt.onnx");
  await ort.InferenceSession.create(join(dir, sourceFile), {
    graphOptimizationLevel: LEVEL,
    optimizedModelFilePath: join(dir, outFile),
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const bytes = readFileSync(join(dir, outFile));
  manifest.graphs[options.graph] = {
    ...graph,
    file: outFile,
    sha256: sha256(bytes),
    bytes: bytes.length,
    optimized: {
      level: LEVEL,
      by: `onnxruntime-node ${version}`,
      source: { file: sourceFile, sha256: sha256(sourceBytes), bytes: sourceBytes.length },
    },
  };
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(
    `${join(dir, outFile)}: ${bytes.length} bytes (source ` +
      `${sourceBytes.length}), sha256 ${manifest.graphs[options.graph].sha256}`,
  );
}
