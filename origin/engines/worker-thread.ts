// Starts a worker thread from a module of this source tree. The origin runs its TypeScript
// through tsx, whose loader a worker does not inherit (Node 20), so a .ts module is
// imported by a small bootstrap that registers tsx in the worker first.
import { Worker, type WorkerOptions } from "node:worker_threads";

export function startWorker(module: URL, options: WorkerOptions): Worker {
  if (!module.pathname.endsWith(".ts")) return new Worker(module, options);
  const tsx = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
