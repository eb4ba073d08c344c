// Builds the origin into plain JavaScript: dist/server.js and the decoder's worker thread
// dist/worker.js, with the shared modules of ../src compiled in and npm packages left as
// imports (each one a dependency in package.json).
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = fileURLToPath(new URL(".", import.meta.url));

/** @type {import("esbuild").BuildOptions} */
export const options = {
  absWorkingDir: here,
  entryPoints: ["server.ts", "engines/decoder/worker.ts"],
  entryNames: "[name]",
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: true,
  metafile: true,
  logLevel: "warning",
};

if (process.argv[1] === fileURLToPath(import.meta.url)) await esbuild.build(options);
