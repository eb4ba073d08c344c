// Composition root: turns the Worker's env into configuration (each model's origin) and stores
// (the fraud ledger). What is built once per isolate is src/isolate.ts; routes receive both.
import { NO_ORIGIN, type OriginConfig } from "./runtime";
import { parseCanary } from "./runtime/origin/canary-config";
import { poolConfig } from "./runtime/origin/pool-config";
import { missingMigrations } from "./tasks/fraud/ledger/d1-schema";
import { durableCards } from "./tasks/fraud/ledger/durable-cards";
import { recordUnscored } from "./tasks/fraud/ledger/unscored-events";
import { labelCounts, recordOutcome } from "./tasks/fraud/outcomes/outcome-store";
import { backtestRows, currentRules, putRule } from "./tasks/fraud/rules/rule-store";
import type { FraudStores } from "./tasks/fraud/ledger/ledger";

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
 * A model's replicas: ORIGIN_POOL_<MODEL> or ORIGIN_URL_<MODEL> when either is set, else
 * ORIGIN_POOL or ORIGIN_URL (docs/operations.md, "Origin pools").
 */
function originPool(env: Env, model: string | undefined) {
  const at = (name: string) => {
    const value = variable(env, name);
    return value === undefined ? undefined : { name, value };
  };
  if (model !== undefined) {
    const pool = at(perModelKey("ORIGIN_POOL", model));
    const urls = at(perModelKey("ORIGIN_URL", model));
    if (pool !== undefined || urls !== undefined) return poolConfig(pool, urls);
  }
  return poolConfig(at("ORIGIN_POOL"), at("ORIGIN_URL"));
}

/**
 * Where a model's origin is: ORIGIN_URL or ORIGIN_POOL (one URL, or a pool of replicas),
 * ORIGIN_CANARY (two of the pool's versions side by side: docs/operations.md, "Canary"),
 * ORIGIN_API_KEY and the timeouts
 * (ORIGIN_TIMEOUT_MS, ORIGIN_FIRST_TOKEN_TIMEOUT_MS, ORIGIN_IDLE_TIMEOUT_MS), each
 * overridable per model with a `_<MODEL>` suffix (name upper-cased, non-alphanumerics → _).
 */
export function originConfig(env: Env, model?: string): OriginConfig {
  const read = (name: string) =>
    (model === undefined ? undefined : variable(env, perModelKey(name, model))) ??
    variable(env, name);
  const pool = originPool(env, model);
  const replicas = "replicas" in pool ? pool.replicas : [];
  const canaryName =
    model !== undefined && variable(env, perModelKey("ORIGIN_CANARY", model))
      ? perModelKey("ORIGIN_CANARY", model)
      : "ORIGIN_CANARY";
  const canaryValue = variable(env, canaryName);
  const canary =
    canaryValue === undefined ? undefined : parseCanary(canaryName, canaryValue, replicas);
  const configError =
    "error" in pool
      ? pool.error
      : canary !== undefined && "error" in canary
        ? canary.error
        : undefined;
  return {
    url: replicas[0]?.url,
    replicas,
    ...(canary !== undefined && "canary" in canary ? { canary: canary.canary } : {}),
    ...(configError === undefined ? {} : { configError }),
    apiKey: read("ORIGIN_API_KEY"),
    timeoutMs: positive(read("ORIGIN_TIMEOUT_MS"), NO_ORIGIN.timeoutMs),
    firstTokenTimeoutMs: positive(read("ORIGIN_FIRST_TOKEN_TIMEOUT_MS"), undefined),
    idleTimeoutMs: positive(read("ORIGIN_IDLE_TIMEOUT_MS"), undefined),
  };
}

/** The fraud webhooks' store: each card's ledger (history and decisions) in its Durable Object. */
export function fraudStores(env: Env): FraudStores {
  return {
    ledger: durableCards(env.CARD_HISTORY),
    missingMigrations: () => missingMigrations(env.DB),
    recordUnscored: (event) => recordUnscored(env.DB, event),
    recordOutcome: (outcome) => recordOutcome(env.DB, outcome),
    labelCounts: (since, until) => labelCounts(env.DB, since, until),
    currentRules: () => currentRules(env.DB),
    putRule: (rule) => putRule(env.DB, rule),
    backtestRows: (since, until, limit) => backtestRows(env.DB, since, until, limit),
  };
}
