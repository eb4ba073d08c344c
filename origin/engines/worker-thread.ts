// Starts a worker thread from a module of this source tree: built, the module's bundle
// beside the server's (dist/worker.js); from source, through a bootstrap that registers
// tsx first, whose loader a worker does not inherit (Node 20).
import { basename } from "node:path";
import { Worker, type WorkerOptions } from "node:worker_threads";

export function startWorker(module: URL, options: WorkerOptions): Worker {
  if (!module.pathname.endsWith(".ts")) return new Worker(module, options);
  if (!import.meta.url.endsWith(".ts")) {
    const built = new URL(`./${basename(module.pathname, ".ts")}.js`, import.meta.url);
    return new Worker(built, options);
  }
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap =
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); ` +
    `return import(${JSON.stringify(module.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
