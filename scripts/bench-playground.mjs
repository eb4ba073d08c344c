#!/usr/bin/env node
// What serving the playground as static assets costs the API, side by side in one run: the
// Worker's deploy bundle built with this wrangler.jsonc and with a copy of it without `assets`
// (same bytes expected: the playground is no module of the Worker), then three `wrangler dev`s
// timed in interleaved blocks on the same requests (p50/p99, and ratios to the one without
// assets): this configuration (API paths to the Worker first), assets with an asset lookup
// before the Worker (no run_worker_first), and no assets at all.
// Usage: npm run bench:playground [-- --requests 400]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { timeInterleaved } from "./lib/stats.mjs";
import { startWranglerDev } from "./lib/wrangler-dev.mjs";

const { values: options } = parseArgs({
  options: { requests: { type: "string", default: "400" } },
});
const REQUESTS = Number(options.requests);
const ROOT = join(import.meta.dirname, "..");

// The variants sit beside wrangler.jsonc, so that its relative paths mean the same.
const config = readFileSync(join(ROOT, "wrangler.jsonc"), "utf8");
const assetsBlock = /^ {2}"assets": \{\n[^}]*\n {2}\},\n/m;
const workerFirst = /,\n\s*"run_worker_first": \[[^\]]*\]/;
if (!assetsBlock.test(config) || !workerFirst.test(config))
  throw new Error("wrangler.jsonc: no `assets` block with run_worker_first to vary");
const variants = {
  "no assets": config.replace(assetsBlock, ""),
  "assets, lookup first": config.replace(workerFirst, ""),
};
const paths = {};
for (const [name, text] of Object.entries(variants)) {
  paths[name] = join(ROOT, `.wrangler-${name.replace(/\W+/g, "-")}.jsonc`);
  writeFileSync(paths[name], text);
}

/** The deploy bundle's files and gzip total, as scripts/bundle-size.mjs counts them. */
function bundle(configPath) {
  const outdir = mkdtempSync(join(tmpdir(), "bench-playground-"));
  execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir, "-c", configPath], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const files = readdirSync(outdir).filter(
    (name) => !name.endsWith(".map") && name !== "README.md",
  );
  let gzip = 0;
  const sizes = [];
  for (const name of files.sort()) {
    const bytes = readFileSync(join(outdir, name));
    gzip += gzipSync(bytes, { level: 9 }).length;
    sizes.push(`${name}:${bytes.length}`);
  }
  rmSync(outdir, { recursive: true, force: true });
  return { gzip, files: sizes.join(",") };
}

const stops = [];
try {
  const withAssets = bundle("wrangler.jsonc");
  const without = bundle(paths["no assets"]);
  const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(3)} MiB`;
  console.log(
    `bundle gzip: with assets ${mib(withAssets.gzip)}, without ${mib(without.gzip)}; ` +
      `same files and sizes: ${withAssets.files === without.files}`,
  );

  const servers = [];
  for (const [name, configPath] of [
    ["this config", undefined],
    ["assets, lookup first", paths["assets, lookup first"]],
    ["no assets", paths["no assets"]],
  ]) {
    const state = mkdtempSync(join(tmpdir(), "bench-playground-state-"));
    const edge = await startWranglerDev({
      persistTo: state,
      vars: {},
      ...(configPath === undefined ? {} : { config: configPath }),
    });
    stops.push(() => {
      edge.stop();
      rmSync(state, { recursive: true, force: true });
    });
    servers.push({ name, edge });
  }
  const page = await fetch(`${servers[0].edge.url}/`);
  console.log(`GET / (this config): ${page.status} ${page.headers.get("content-type")}`);

  const requests = {
    "POST /v1/classify": (edge) =>
      fetch(`${edge.url}/v1/classify`, {
        method: "POST",
        headers: { ...edge.headers, "content-type": "application/json" },
        body: JSON.stringify({ model: "spam-classifier", input: "URGENT: you have WON" }),
      }),
    "GET /v1/models": (edge) => fetch(`${edge.url}/v1/models`, { headers: edge.headers }),
  };
  for (const [label, send] of Object.entries(requests)) {
    const runs = servers.map(({ edge }) => async () => {
      const response = await send(edge);
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${label}: ${response.status}`);
    });
    const timed = await timeInterleaved(runs, { inputs: REQUESTS, block: 20, warmupMs: 3000 });
    const base = timed.at(-1);
    const ms = (value) => `${value.toFixed(2)} ms`;
    console.log(label);
    for (const [k, { name }] of servers.entries()) {
      const { p50, p99 } = timed[k];
      console.log(
        `  ${name.padEnd(22)} p50 ${ms(p50)} p99 ${ms(p99)}  ` +
          `(x${(p50 / base.p50).toFixed(3)} p50, x${(p99 / base.p99).toFixed(3)} p99)`,
      );
    }
  }
} finally {
  for (const stop of stops) stop();
  for (const path of Object.values(paths)) rmSync(path, { force: true });
}
