// Starts the reference origin (origin/server.ts) as a real process on a free loopback
// port: for the tests that talk to it over HTTP and for the benchmark. Resolves once it
// listens and its models have loaded (or failed: /health then says "degraded").
import { spawn } from "node:child_process";

/**
 * @param {Record<string, string>} [env] extra environment (ORIGIN_API_KEY, ORIGIN_MODELS, …)
 * @returns {Promise<{ url: string, process: import("node:child_process").ChildProcess,
 *   stop: () => Promise<void> }>}
 */
export function startOrigin(env = {}) {
  const child = spawn("node_modules/.bin/tsx", ["origin/server.ts"], {
    env: { ...process.env, ORIGIN_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`origin did not start within 120 s:\n${output}`));
    }, 120_000);
    const onData = (chunk) => {
      output += chunk.toString();
      const match = /origin listening on (http:\/\/\S+)/.exec(output);
      if (match && /origin models loaded/.test(output)) {
        clearTimeout(timer);
        resolve({ url: match[1], process: child, stop });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`origin exited with ${code}:\n${output}`));
    });
  });
}
