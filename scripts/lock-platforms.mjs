#!/usr/bin/env node
// Keeps `npm ci` working where the registry mirror lacks workerd's macOS/Windows binaries:
// npm then leaves those optional packages out of package-lock.json and `npm ci` refuses the
// lockfile as out of sync. This adds their (never installed on Linux) entries back.
// Run after any `npm install` that rewrites the lockfile: node scripts/lock-platforms.mjs
import { readFileSync, writeFileSync } from "node:fs";

const PLATFORMS = {
  "@cloudflare/workerd-darwin-64": [["darwin"], ["x64"]],
  "@cloudflare/workerd-darwin-arm64": [["darwin"], ["arm64"]],
  "@cloudflare/workerd-windows-64": [["win32"], ["x64"]],
};

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const added = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.endsWith("node_modules/workerd")) continue;
  const base = path.slice(0, -"workerd".length);
  for (const [name, [os, cpu]] of Object.entries(PLATFORMS)) {
    if (!(name in (entry.optionalDependencies ?? {})) || lock.packages[base + name]) continue;
    lock.packages[base + name] = {
      version: entry.version,
      cpu,
      dev: true,
      license: "Apache-2.0",
      optional: true,
      os,
      engines: { node: ">=16" },
    };
    added.push(base + name);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length === 0 ? "lockfile already complete" : `added ${added.join(", ")}`);
