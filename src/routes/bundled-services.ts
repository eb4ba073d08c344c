// The Worker's services: built once per isolate from the models bundled with it (those
// without bundled files are read from R2; `runtime: "origin"` ones run on ORIGIN_URL).
import { bundledModels } from "../models/bundled";
import { createRegistry } from "../models/registry";
import { edgeRuntimes, NO_ORIGIN, type OriginConfig } from "../runtime";
import { createServices, type Services } from "../tasks";

let services: Services | undefined;

/** Where `runtime: "origin"` models run, from ORIGIN_URL / ORIGIN_API_KEY / ORIGIN_TIMEOUT_MS. */
export function originConfig(env: Env): OriginConfig {
  const timeoutMs = Number(env.ORIGIN_TIMEOUT_MS);
  return {
    url: env.ORIGIN_URL || undefined,
    apiKey: env.ORIGIN_API_KEY || undefined,
    timeoutMs: Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : NO_ORIGIN.timeoutMs,
  };
}

/** The isolate's services, built on first use (R2 is only reachable through env). */
export function defaultServices(env: Env): Services {
  services ??= createServices(createRegistry(bundledModels, { bucket: env.MODELS, runtimeFor: edgeRuntimes(originConfig(env)) }));
  return services;
}
