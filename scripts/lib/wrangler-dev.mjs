// The Worker under `wrangler dev` on a free loopback port, for the benchmarks. It runs on the
// `vars` it is given and an API key of its own, whatever the checkout's .dev.vars or .env hold
// (a README-configured .dev.vars sets API_KEYS, which would answer the benchmarks 401).
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A free TCP port on loopback. */
export const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * `vars` with API_KEYS set (a fresh key unless `vars` names one), and the headers that send
 * its first key: every benchmark's Worker requires a key it knows.
 * @param {Record<string, string>} vars
 */
export function withApiKey(vars) {
  const keys = vars.API_KEYS ?? `bench-${randomUUID()}`;
  const apiKey = keys.split(",")[0].trim();
  return {
    vars: { ...vars, API_KEYS: keys },
    apiKey,
    headers: { authorization: `Bearer ${apiKey}` },
  };
}

/**
 * A fresh directory of local state under the system's temporary directory, with the D1
 * migrations applied, as `npm start` applies them (for `persistTo`).
 * @param {string} prefix the directory name's start
 */
export function migratedState(prefix) {
  const persistTo = mkdtempSync(join(tmpdir(), prefix));
  execFileSync(
    "npx",
    ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo],
    { stdio: "ignore" },
  );
  return persistTo;
}

/** An empty env file: given as --env-file, wrangler dev reads neither .dev.vars nor .env. */
function emptyEnvFile() {
  const path = join(tmpdir(), "edge-inference-bench.env");
  writeFileSync(path, "");
  return path;
}

/**
 * Starts `wrangler dev` with local state in `persistTo` and the given `--var`s; resolves once it is
 * ready. `stop()` ends it and its workerd; `kill(signal)` signals the whole process group (the soak
 * test kills it with SIGKILL) and resolves once wrangler has exited.
 * @param {{ persistTo: string, vars: Record<string, string>, inspector?: boolean,
 *   traceCollector?: boolean, config?: string, cwd?: string }} options
 *   `inspector`: also open the devtools inspector on a free port (`inspectorUrl`);
 *   `traceCollector: false`: without wrangler's local trace collector, the tail Worker that
 *   records every invocation (X_LOCAL_OBSERVABILITY=false);
 *   `config`: another wrangler configuration than the repository's (e.g. a benchmark's relay
 *   Worker); `cwd`: the checkout to run (default: this one).
 *   Its API_KEYS: `vars`' own, or a fresh key (`apiKey`; `headers` send it).
 * @returns {Promise<{ url: string, pid: number, apiKey: string,
 *   headers: { authorization: string }, inspectorUrl?: string, startMs: number, stop: () => void,
 *   kill: (signal: NodeJS.Signals) => Promise<void> }>}
 */
export async function startWranglerDev({
  persistTo,
  vars,
  inspector = false,
  traceCollector = true,
  config,
  cwd = undefined,
}) {
  const port = await freePort();
  const inspectorPort = inspector ? await freePort() : undefined;
  const started = performance.now();
  const keyed = withApiKey(vars);
  const varArgs = Object.entries(keyed.vars).flatMap(([name, value]) => [
    "--var",
    `${name}:${value}`,
  ]);
  const child = spawn(
    "npx",
    [
      "wrangler",
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--persist-to",
      persistTo,
      "--env-file",
      emptyEnvFile(),
      ...varArgs,
      ...(inspectorPort === undefined ? [] : ["--inspector-port", String(inspectorPort)]),
      ...(config === undefined ? [] : ["--config", config]),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      cwd,
      ...(traceCollector ? {} : { env: { ...process.env, X_LOCAL_OBSERVABILITY: "false" } }),
    },
  );
  let output = "";
  child.stderr.on("data", (chunk) => (output = (output + chunk.toString()).slice(-2000)));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`wrangler dev did not start in 120 s:\n${output}`)),
      120_000,
    );
    child.stdout.on("data", (chunk) => {
      output = (output + chunk.toString()).slice(-2000);
      if (/Ready on/.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`wrangler dev exited with ${code}:\n${output}`)));
  });
  const inspectorUrl =
    inspectorPort === undefined ? undefined : `ws://127.0.0.1:${inspectorPort}/ws`;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    apiKey: keyed.apiKey,
    headers: keyed.headers,
    inspectorUrl,
    startMs: performance.now() - started,
    stop: () => process.kill(-child.pid, "SIGTERM"),
    kill: async (signal) => {
      process.kill(-child.pid, signal);
      await exited;
    },
  };
}
