// What this isolate builds once and keeps, in one place, with a list of the memos that stay beside
// the pure code they speed up.
import { env } from "cloudflare:workers";
import { originConfig } from "./compose";
import { bundledModels } from "./models/bundled";
import { createRegistry } from "./models/registry";
import { edgeRuntimes } from "./runtime";
import { createBreakers } from "./runtime/origin/circuit-breaker";
import { createServices, type Services } from "./tasks";
import { preloadModels, type PreloadOutcome } from "./tasks/preload";

const breakers = createBreakers();
let services: Services | undefined;
let preloading: Promise<PreloadOutcome[]> | undefined;

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
 * - tasks/fraud/rules/rule-language: the CEL environment rules are checked against (one)
 * - tasks/fraud/rules/rule-store: the enabled rules, compiled (per D1 binding; read again after
 *   5 s, and at once after a PUT in this isolate)
 * - routes/http/auth: the API keys' SHA-256 digests (per API_KEYS value)
 * - routes/http/body: the body-limit middleware per size (per MAX_BODY_BYTES value)
 * - routes/openai/models: when this isolate began serving, `created` (first /v1/models)
 */
export const isolate = {
  /** The served models, built on first use with the isolate's bindings (R2, origins). */
  services(): Services {
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
    preloading ??= preloadModels(isolate.services());
    return preloading;
  },
};
