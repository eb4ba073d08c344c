// The reference GPU origin: an engine host that serves every model under ORIGIN_MODELS —
// tensor models over the Open Inference Protocol v2 (as Triton and KServe do),
// text-generation models over vLLM's /v1/completions with continuous batching — on
// onnxruntime-node (the CUDA execution provider where present, CPU otherwise).
//
//   npm run origin                                   # http://127.0.0.1:8788
//   ORIGIN_PORT=0 npm run origin                     # any free port (printed)
//   ORIGIN_HOST=0.0.0.0 ORIGIN_API_KEY=… npm run origin
//
// Without ORIGIN_API_KEY it only listens on loopback. Models load after the server
// listens: /health answers 503 until they have.
import { serve } from "@hono/node-server";
import { createOriginApp } from "./app";
import { readConfig } from "./config";
import { executionProvidersFor } from "./engines/onnx-session";
import { createModelHost } from "./model-host";

let config: ReturnType<typeof readConfig>;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
const host = createModelHost(config);
const app = createOriginApp(host, config);
const providers = executionProvidersFor(config).join(", ");

const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, (info) => {
  const models = [...host.models.values()]
    .map((model) => `${model.manifest.name} ${model.manifest.version}`)
    .join(", ");
  console.log(`origin listening on http://${config.host}:${info.port} (${providers}): ${models}`);
});
void host.loaded.then(() => {
  const states = [...host.models.values()]
    .map(
      (model) =>
        `${model.manifest.name} ${model.status}${model.mode === undefined ? "" : ` (${model.mode})`}`,
    )
    .join(", ");
  console.log(`origin models loaded: ${states}`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // Engine threads stop between runs: exiting inside onnxruntime's run would abort the process.
    const stopped = host.close();
    server.close(() => void stopped.then(() => process.exit(0)));
    setTimeout(() => void stopped.then(() => process.exit(0)), 2000).unref();
  });
}
