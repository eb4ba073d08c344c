#!/usr/bin/env node
// Bundles the playground's TypeScript (playground/src/main.ts) into playground/public/app.js with
// esbuild. The output is committed, so a fresh clone serves the playground without a build step;
// test/unit/playground/bundle.test.ts fails when the committed file differs from a fresh build.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const ROOT = join(import.meta.dirname, "..");
export const OUTPUT = join(ROOT, "playground/public/app.js");

/** The bundle's text, built in memory (deterministic: same sources, same bytes). */
export async function buildPlayground() {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ["playground/src/main.ts"],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    minify: true,
    legalComments: "eof",
    charset: "utf8",
    write: false,
    banner: { js: "// Built by scripts/build-playground.mjs from playground/src; do not edit." },
  });
  const [file] = result.outputFiles;
  if (file === undefined) throw new Error("esbuild produced no output");
  return file.text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await buildPlayground();
  writeFileSync(OUTPUT, text);
  console.log(`playground/public/app.js: ${(text.length / 1024).toFixed(1)} KiB`);
}
