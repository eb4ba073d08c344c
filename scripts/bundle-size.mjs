#!/usr/bin/env node
// Builds the deploy bundle exactly as `wrangler deploy` would (--dry-run --outdir dist),
// prints every module's raw and gzip size, and fails when the gzip total is over budget.
// Budget: 7 MiB gzip, 3 MiB under the 10 MiB Workers paid-plan limit, kept as headroom
// for the next edge models (the ORT WASM binary alone is ~3.6 MiB of it).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";

const BUDGET_GZIP_BYTES = 7 * 1024 * 1024;
const outdir = "dist";

rmSync(outdir, { recursive: true, force: true });
execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], {
  stdio: ["ignore", "ignore", "inherit"],
});

function* files(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (!entry.endsWith(".map") && entry !== "README.md") yield path;
  }
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
let raw = 0;
let gzip = 0;
const rows = [];
for (const path of files(outdir)) {
  const bytes = readFileSync(path);
  const compressed = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gzip += compressed;
  rows.push([relative(outdir, path), bytes.length, compressed]);
}
rows.sort((a, b) => b[2] - a[2]);
for (const [name, size, compressed] of rows)
  console.log(`${mib(size).padStart(11)} raw ${mib(compressed).padStart(11)} gzip  ${name}`);
console.log(`bundle: ${mib(raw)} raw, ${mib(gzip)} gzip (budget ${mib(BUDGET_GZIP_BYTES)} gzip)`);
if (gzip > BUDGET_GZIP_BYTES) {
  console.error(`bundle over budget by ${mib(gzip - BUDGET_GZIP_BYTES)}`);
  process.exit(1);
}
