// The origin's entry point: reads flags and environment, listens, loads the models in the
// background, and on SIGTERM or SIGINT drains (new work refused, running requests given the
// grace period, what is left cut) before it exits 0. README.md documents its use.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { createOriginApp } from "./app";
import { applyFlags, USAGE } from "./cli";
import { type OriginConfig, readConfig } from "./config";
import { executionProvidersFor } from "./engines/onnx-session";
import { Drain } from "./http/drain";
import { createModelHost } from "./model-host";
import { createTracing } from "./tracing";

/** After the grace period, how long cut streams get to write their last events. */
const CUT_FLUSH_MS = 5_000;
/** How long the engines' threads get to stop between two runs. */
const ENGINE_STOP_MS = 10_000;

let config: OriginConfig;
try {
  const env = applyFlags(process.argv.slice(2), process.env);
  if (env === "help") {
    console.log(USAGE);
    process.exit(0);
  }
  config = readConfig(env);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
const providers = executionProvidersFor(config);
const host = createModelHost(config);
const drain = new Drain(Math.max(1, Math.ceil(config.drainTimeoutMs / 1000)));
// Off (no middleware at all) unless an OTLP endpoint is configured.
const tracing = createTracing(process.env);
const app = createOriginApp(host, config, drain, tracing);

// Requests whose response has not ended yet (streams included): what a drain waits for.
let active = 0;
let settled: (() => void) | undefined;
const server = createServer(getRequestListener(app.fetch));
server.on("request", (_request: IncomingMessage, response: ServerResponse) => {
  active += 1;
  response.once("close", () => {
    active -= 1;
    if (active === 0) settled?.();
  });
});
const idle = (ms: number) =>
  new Promise<boolean>((resolve) => {
    if (active === 0) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    settled = () => {
      clearTimeout(timer);
      resolve(true);
    };
  });

server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  const models = [...host.models.values()]
    .map((model) => `${model.manifest.name} ${model.manifest.version}`)
    .join(", ");
  console.log(
    `origin listening on http://${config.host}:${port} ` +
      `(execution providers: ${providers.join(", ")}): ${models}`,
  );
});
void host.loaded.then(() => {
  const states = [...host.models.values()]
    .map((model) =>
      model.status === "ready"
        ? `${model.manifest.name} ready on ` +
          `${providers[0]}${model.mode === undefined ? "" : ` (${model.mode})`}`
        : `${model.manifest.name} ${model.status}`,
    )
    .join(", ");
  console.log(`origin models loaded: ${states}`);
});

const log = (event: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ event, ...fields }));

let draining: Promise<void> | undefined;
async function shutDown(signal: string): Promise<void> {
  log("drain_started", { signal, in_flight: active, grace_ms: config.drainTimeoutMs });
  drain.begin();
  if (!(await idle(config.drainTimeoutMs))) {
    log("drain_expired", { in_flight: active });
    drain.expire();
    if (!(await idle(CUT_FLUSH_MS))) server.closeAllConnections();
  }
  server.close();
  server.closeIdleConnections();
  // Engine threads stop between runs: exiting inside onnxruntime's run would abort the
  // process. Their workers are unref'd, so this timer keeps the process alive until they have
  // (and bounds the wait).
  const bound = setTimeout(() => process.exit(0), ENGINE_STOP_MS);
  await host.close();
  // The spans still buffered go out before the exit (bounded by the same timer).
  await tracing?.shutdown().catch(() => undefined);
  clearTimeout(bound);
  log("drain_finished");
  process.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second signal cuts the grace period short.
    if (draining !== undefined) return drain.expire();
    draining = shutDown(signal);
  });
}
