// The reference GPU origin: an Open Inference Protocol v2 server (the protocol Triton and
// KServe speak) that runs every model under models/ with onnxruntime-node — the CUDA
// execution provider on a GPU host, the CPU one elsewhere. For development, tests and
// small deployments; the edge reaches it through ORIGIN_URL.
//
//   npm run origin                                   # http://127.0.0.1:8788
//   ORIGIN_PORT=0 npm run origin                     # any free port (printed)
//   ORIGIN_HOST=0.0.0.0 ORIGIN_API_KEY=… ORIGIN_EXECUTION_PROVIDERS=cuda,cpu npm run origin
//
// Without ORIGIN_API_KEY it only listens on loopback.
import { timingSafeEqual } from "node:crypto";
import { serve } from "@hono/node-server";
import { createServices } from "../src/tasks";
import { createOriginApp } from "./app";
import { nativeRegistry, readModels } from "./models";

const host = process.env.ORIGIN_HOST ?? "127.0.0.1";
const port = Number(process.env.ORIGIN_PORT ?? 8788);
const apiKey = process.env.ORIGIN_API_KEY ?? "";
const modelsDir = process.env.ORIGIN_MODELS ?? "models";
const executionProviders = (process.env.ORIGIN_EXECUTION_PROVIDERS ?? "cpu").split(",").map((name) => name.trim()).filter(Boolean);
const maxBodyBytes = process.env.ORIGIN_MAX_BODY_BYTES ?? String(64 * 1024 * 1024);

if (!apiKey && !["127.0.0.1", "::1", "localhost"].includes(host)) {
  console.error(`Refusing to listen on ${host} without ORIGIN_API_KEY`);
  process.exit(1);
}

// The shared auth middleware compares keys with Workers' crypto.subtle.timingSafeEqual;
// Node offers the same constant-time comparison in node:crypto.
const bytes = (value: ArrayBuffer | ArrayBufferView) =>
  ArrayBuffer.isView(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : new Uint8Array(value);
crypto.subtle.timingSafeEqual ??= (a, b) => timingSafeEqual(bytes(a), bytes(b));

const services = createServices(nativeRegistry(readModels(modelsDir), executionProviders), { tensorsOnly: true });
const app = createOriginApp(services);
// The middleware reads its settings from the Worker-style env; the origin's come from process.env.
const env = { API_KEYS: apiKey, ALLOW_ANONYMOUS: apiKey ? "false" : "true", MAX_BODY_BYTES: maxBodyBytes } as Partial<Env> as Env;

const server = serve({ fetch: (request) => app.fetch(request, env), hostname: host, port }, (info) => {
  const models = services.list().map((model) => `${model.manifest.name} ${model.manifest.version}`).join(", ");
  console.log(`origin listening on http://${host}:${info.port} (${executionProviders.join(", ")}): ${models}`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)));
