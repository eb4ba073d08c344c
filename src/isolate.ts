// What this isolate builds once and keeps, in one place, with a list of the memos that stay beside
// the pure code they speed up.
import { env } from "cloudflare:workers";
import { originConfig } from "./compose";
import { bundledModels } from "./models/bundled";
import { createRegistry } from "./models/registry";
import { canaryMonitor, d1Rollbacks, edgeRuntimes } from "./runtime";
import { createBreakers } from "./runtime/origin/circuit-breaker";
import { createServices, type Services } from "./tasks";
import { preloadModels, type PreloadOutcome } from "./tasks/preload";

const breakers = createBreakers();
let services: Services | undefined;
let preloading: Promise<PreloadOutcome[]> | undefined;

/**
 * Checks every origin model's configuration (ORIGIN_URL, ORIGIN_POOL, per-model variants) at
 * start-up and logs each mistake, named, as `origin_config_invalid`; such a model answers 503
 * `model_not_ready` with the same words until the configuration is fixed.
 */
function reportOriginConfig(served: Services): void {
  for (const { manifest } of served.list()) {
    if (manifest.runtime !== "origin") continue;
    const { configError } = originConfig(env, manifest.name);
    if (configError !== undefined)
      console.error(
        JSON.stringify({
          event: "origin_config_invalid",
          model: manifest.name,
          error: configError,
        }),
      );
  }
}

/**
 * The Worker's isolate reads its configuration from its env (cloudflare:workers) at each use, so a
 * variable changed between requests (as tests change theirs) is seen without keeping "the env of
 * the latest call".
 *
 * Built here, the isolate's own state:
 * - services(): the registry, each model's runtime, ORT sessions, tokenizers and chat
 *   templates (tasks/); built at first use: at start-up, where the Worker preloads (src/index.ts)
 * - preload(): the preload's outcome, one per `preload` model; once, at start-up
 * - breakers: a circuit breaker per origin URL; at each URL's first call
 * - the fleet (runtime/origin/replica-pool, held by the services' runtimes): per replica URL its
 *   in-flight count, draining and busy marks, and the block hashes of the prompts it served
 *   (65,536 at most: 2.2 MiB of heap, measured in Node); at each replica's first call
 *
 * Memos that stay beside the pure code they speed up (shared by edge and origin, bounded, each
 * keyed by what it was computed from, so they cannot go stale):
 * - runtime/wasm/ort.ts: onnxruntime-web's one WASM instance (first session; one per isolate)
 * - generation/structured/structured-outputs: compiled JSON schemas and regexes (per format; LRU,
 *   4 MB of DFAs)
 * - generation/structured/state-key, json-bytes: automaton state identities (per state; weak)
 * - tokenizers/chat-template: compiled chat templates, by template text (per template; models'
 *   count)
 * - tokenizers/compact-tokenizer: the byte-level alphabet table (first byte-level tokenizer)
 * - tasks/model-tokenizer, token-names, text-generation/structured-constraint: a model's
 *   tokenizer, token names, vocabulary trie and mask cache of 1 MiB (per model; weak, with the
 *   model)
 * - tasks/fraud/featurize: a feature list's column indexes (per manifest; weak)
 * - tasks/fraud/context, sources/adyen-signature: MERCHANT_PROFILE parsed; Adyen HMAC CryptoKeys
 *   (per configured value)
 * - tasks/keys/authenticate: the API_KEYS bootstrap keys' SHA-256 digests (per API_KEYS value);
 *   stored keys' lookups by hash (10 s each, 4,096 at most: a revocation elsewhere reaches this
 *   isolate within 10 s); when each key's last use was written (once a minute)
 * - tasks/keys/auth-failures: failed authentications by reason (for /metrics)
 * - tasks/metrics/edge-metrics: requests by method, route template and status class, their
 *   durations, prompt and generated tokens and time to first token by model (for /metrics;
 *   series bounded by the routes, methods and models)
 * - runtime/origin/canary-monitor: per model with ORIGIN_CANARY, the canary's attempts over its
 *   window (bounded), attempts by version and outcome, whether it was rolled back (here, or by
 *   another isolate: read from D1 every 10 s at most) and when D1 was last asked
 * - tasks/keys/audit: when this isolate last pruned the audit trail (once an hour)
 * - tasks/keys/settlements: per limited key, its ended generations' settlements that wait for
 *   the key's next reservation (each sent within 250 ms), and when it last reserved (4,096 keys)
 * - runtime/origin/pool-config: parsed ORIGIN_POOL / ORIGIN_URL values (per value; 256 at most)
 * - tasks/fraud/rules/rule-language: the CEL environment rules are checked against (one)
 * - tasks/fraud/rules/rule-store: the enabled rules, compiled (per D1 binding; read again after
 *   5 s, and at once after a PUT in this isolate)
 * - tasks/fraud/drift/drift: the last 7 days' drift report /metrics shows (per fraud model; read
 *   again after 5 minutes)
 * - routes/http/body: the body-limit middleware per size (per MAX_BODY_BYTES value)
 * - routes/openai/models: when this isolate began serving, `created` (first /v1/models)
 */
export const isolate = {
  /** The served models, built on first use with the isolate's bindings (R2, origins). */
  services(): Services {
    // Canary rollbacks are shared through D1: one isolate's rollback moves every isolate's
    // traffic back (runtime/origin/canary-monitor).
    if (services === undefined) canaryMonitor.share(d1Rollbacks(env.DB));
    services ??= createServices(
      createRegistry(bundledModels, {
        bucket: env.MODELS,
        runtimeFor: edgeRuntimes((model) => originConfig(env, model), breakers),
      }),
    );
    return services;
  },

  /**
   * Loads the models marked `preload` into the services the requests use, once: the Worker
   * calls it at its top level, where Workers run it before the first request. Never rejects;
   * a model that failed loads on request as usual.
   */
  preload(): Promise<PreloadOutcome[]> {
    preloading ??= (() => {
      reportOriginConfig(isolate.services());
      return preloadModels(isolate.services());
    })();
    return preloading;
  },
};
