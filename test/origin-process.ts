// Starts the reference origin (origin/server.ts) as a real process on a free loopback
// port, for the tests that talk to it over HTTP.
import { spawn, type ChildProcess } from "node:child_process";

export interface OriginProcess {
  url: string;
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export function startOrigin(env: Record<string, string> = {}): Promise<OriginProcess> {
  const child = spawn("node_modules/.bin/tsx", ["origin/server.ts"], {
    env: { ...process.env, ORIGIN_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`origin did not start within 30 s:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /origin listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ url: match[1], process: child, output: () => output, stop });
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
