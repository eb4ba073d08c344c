// Composition root: the one place that turns the Worker's env into runtimes, stores and
// configuration. Routes receive what is built here; none of them builds anything.
import { bundledModels } from "./models/bundled";
import { createRegistry } from "./models/registry";
import { edgeRuntimes, NO_ORIGIN, type OriginConfig } from "./runtime";
import { durableCards } from "./tasks/fraud/ledger/card-history";
import { missingMigrations } from "./tasks/fraud/ledger/d1-schema";
import { recordUnscored } from "./tasks/fraud/ledger/unscored-events";
import type { FraudStores } from "./tasks/fraud/ledger/ledger";
import { createServices, type Services } from "./tasks";
import { preloadModels as preload, type PreloadOutcome } from "./tasks/preload";

function positive(value: string | undefined, fallback: number): number;
function positive(value: string | undefined, fallback: undefined): number | undefined;
function positive(value: string | undefined, fallback: number | undefined): number | undefined {
  const parsed = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(parsed) && parsed > 0
    ? parsed
    : fallback;
}

/** A per-model variable: ORIGIN_URL for tiny-llm is read from ORIGIN_URL_TINY_LLM first. */
export function perModelKey(name: string, model: string): string {
  return `${name}_${model.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

function variable(env: Env, name: string): string | undefined {
  const value: unknown = Reflect.get(env, name);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Where a model's origin is: ORIGIN_URL / ORIGIN_API_KEY and the timeouts
 * (ORIGIN_TIMEOUT_MS, ORIGIN_FIRST_TOKEN_TIMEOUT_MS, ORIGIN_IDLE_TIMEOUT_MS), each
 * overridable per model with a `_<MODEL>` suffix (name upper-cased, non-alphanumerics → _).
 */
export function originConfig(env: Env, model?: string): OriginConfig {
  const read = (name: string) =>
    (model === undefined ? undefined : variable(env, perModelKey(name, model))) ??
    variable(env, name);
  return {
    url: read("ORIGIN_URL"),
    apiKey: read("ORIGIN_API_KEY"),
    timeoutMs: positive(read("ORIGIN_TIMEOUT_MS"), NO_ORIGIN.timeoutMs),
    firstTokenTimeoutMs: positive(read("ORIGIN_FIRST_TOKEN_TIMEOUT_MS"), undefined),
    idleTimeoutMs: positive(read("ORIGIN_IDLE_TIMEOUT_MS"), undefined),
  };
}

let services: Services | undefined;
/** The env of the latest call: origin settings are read from it when a runtime needs them. */
let latestEnv: Env | undefined;
/** Each model's origin settings from `latestEnv`, read once per request (a runtime reads them at every use). */
const originSettings = new Map<string, OriginConfig>();

function latestOriginConfig(fallback: Env, model: string): OriginConfig {
  let settings = originSettings.get(model);
  if (settings === undefined) {
    settings = originConfig(latestEnv ?? fallback, model);
    originSettings.set(model, settings);
  }
  return settings;
}

/**
 * The isolate's services, built on first use (R2 and the origin settings come with env). The
 * top level builds them with `cloudflare:workers`' env to preload models; each request then
 * passes its own env, and origin settings are read from the latest one, once per request (the
 * same bindings when deployed; tests set variables on theirs between requests).
 */
export function defaultServices(env: Env): Services {
  latestEnv = env;
  originSettings.clear();
  services ??= createServices(
    createRegistry(bundledModels, {
      bucket: env.MODELS,
      runtimeFor: edgeRuntimes((model) => latestOriginConfig(env, model)),
    }),
  );
  return services;
}

let preloading: Promise<PreloadOutcome[]> | undefined;

/**
 * Loads the isolate's models marked `preload` into the services the requests use (so they
 * find them cached), once: the Worker calls it at its top level (src/index.ts), where
 * Workers run it before the first request. Never rejects; a model that failed loads on
 * request as usual.
 */
export function preloadModels(env: Env): Promise<PreloadOutcome[]> {
  preloading ??= preload(defaultServices(env));
  return preloading;
}

/** The fraud webhooks' store: each card's ledger (history and decisions) in its Durable Object. */
export function fraudStores(env: Env): FraudStores {
  return {
    ledger: durableCards(env.CARD_HISTORY),
    missingMigrations: () => missingMigrations(env.DB),
    recordUnscored: (event) => recordUnscored(env.DB, event),
  };
}
