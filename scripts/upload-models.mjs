#!/usr/bin/env node
// Uploads every model folder's files to the MODELS R2 bucket under <name>/<version>/<file>,
// the keys src/models/store.ts reads. Local (wrangler dev's state) unless --remote.
//   node scripts/upload-models.mjs [--remote] [model-name ...]
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const BUCKET = "edge-inference-models";
const args = process.argv.slice(2);
const remote = args.includes("--remote");
const only = args.filter((arg) => !arg.startsWith("--"));

for (const name of readdirSync("models")) {
  const manifestPath = join("models", name, "manifest.json");
  if (!existsSync(manifestPath) || (only.length > 0 && !only.includes(name))) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  for (const file of [
    ...Object.values(manifest.graphs ?? {}).map((graph) => graph.file),
    manifest.tokenizer?.file,
  ].filter(Boolean)) {
    const key = `${BUCKET}/${manifest.name}/${manifest.version}/${file}`;
    console.log(`${remote ? "remote" : "local"}: ${key}`);
    const target = remote ? ["--remote"] : ["--local", "--persist-to", ".wrangler/state"];
    execFileSync(
      "npx",
      ["wrangler", "r2", "object", "put", key, "--file", join("models", name, file), ...target],
      { stdio: "inherit" },
    );
  }
}
