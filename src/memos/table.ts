// The table of every memo an isolate keeps (the origin's Node process keeps the shared modules'
// ones too: structured outputs, chat templates, tokenizers). Each is bounded and keyed by what it
// was computed from, so it cannot go stale, unless its bound says when it is read again.

export interface MemoSpec {
  /** What one entry holds, and by what it is keyed. */
  readonly holds: string;
  /** When an entry is built. */
  readonly built: string;
  /** What bounds it. */
  readonly bound: string;
}

export const MEMOS = {
  "isolate.services": {
    holds:
      "the served models: the registry, each model's runtime, ORT sessions, tokenizers, chat " +
      "templates, the fraud scorer's refilled input arrays, and the fleet (per replica URL its " +
      "in-flight count, draining and busy marks, the block hashes of the prompts it served)",
    built: "at first use: the Worker's top level preloads (src/index.ts)",
    bound:
      "the configured models; 65,536 block hashes per replica (2.2 MiB of heap); the fraud " +
      "scorer's arrays: one set of inputs per batch size (1–8) and 32 windows, under 1 MB",
  },
  "isolate.preload": {
    holds: "the preload's outcome, one per `preload` model",
    built: "once, at start-up",
    bound: "the preloaded models",
  },
  "origin.breakers": {
    holds: "a circuit breaker per origin URL",
    built: "at each URL's first call",
    bound: "the configured URLs",
  },
  "origin.pool-configs": {
    holds: "parsed ORIGIN_POOL / ORIGIN_URL values, by variable and value",
    built: "at a value's first use",
    bound: "256 (emptied when full)",
  },
  "origin.canary": {
    holds:
      "per model with ORIGIN_CANARY: the canary's attempts over its window, attempts by version " +
      "and outcome, whether it was rolled back (here, or by another isolate: read from D1) and " +
      "when D1 was last asked",
    built: "at the model's first call",
    bound: "the canary models; attempts within the window; D1 asked every 10 s at most",
  },
  "runtime.batches": {
    holds: "per dynamic batcher's name, the runs it made and the calls they answered",
    built: "at a batcher's first run",
    bound: "the batchers' names: one per model that batches",
  },
  "ort.backend": {
    holds: "onnxruntime-web's one WASM instance: its memory, its readiness, sessions created",
    built: "at the isolate's start (the module's top level)",
    bound: "one",
  },
  "structured.shapes": {
    holds: "compiled JSON schemas, choices and regexes, by spec",
    built: "at a spec's first request",
    bound: "64 shapes and 4 MB of DFAs (least recently used first)",
  },
  "structured.state-ids": {
    holds: "an identity number per automaton shape or property list (state keys)",
    built: "at a state's first key",
    bound: "weak: as long as the shape",
  },
  "structured.same-stack": {
    holds: "a stack as its own one-element successor list",
    built: "at a stack's first step",
    bound: "weak: as long as the stack",
  },
  "chat.templates": {
    holds: "compiled chat templates, by template text",
    built: "at a template's first render",
    bound: "the models' templates",
  },
  "chat.python-numbers": {
    holds: "numbers whose Python text differs from JavaScript's (1.0, big ints), by boxed value",
    built: "while a template's arguments are read",
    bound: "weak: as long as the render's values",
  },
  "tokenizer.byte-alphabet": {
    holds: "GPT-2's byte-level alphabet, character to byte",
    built: "at the first byte-level tokenizer",
    bound: "256 entries",
  },
  "text-generation.tokenizers": {
    holds: "a model's tokenizers, by its file reader and file",
    built: "at the model's first request (failed loads are not kept)",
    bound: "weak: as long as the model",
  },
  "text-generation.token-names": {
    holds: "a tokenizer's token names and bytes (logprobs)",
    built: "at the first request with logprobs",
    bound: "weak: as long as the tokenizer",
  },
  "text-generation.vocabulary": {
    holds: "a tokenizer's vocabulary trie and token bytes, with a 1 MiB cache of masks",
    built: "at the model's first structured output",
    bound: "weak: as long as the tokenizer",
  },
  "metrics.edge": {
    holds:
      "requests by method, route template and status class, their durations, prompt and " +
      "generated tokens and time to first token by model (for /metrics)",
    built: "at the first request",
    bound: "series bounded by the routes, methods and models",
  },
  "metrics.label-sets": {
    holds: "one frozen label set per series",
    built: "at a series' first sample",
    bound: "the series",
  },
  "metrics.series-keys": {
    holds: "the series key of a label set, by labels object",
    built: "at a labels object's first sample",
    bound: "weak: as long as the labels",
  },
  "fraud.merchant-profiles": {
    holds: "MERCHANT_PROFILE parsed, by value",
    built: "at a value's first scored event",
    bound: "configured values",
  },
  "fraud.feature-indexes": {
    holds: "a feature's class → index map, by the manifest's class list",
    built: "at the first event featurized",
    bound: "weak: as long as the manifest",
  },
  "fraud.d1-schema": {
    holds: "the D1 databases whose migrations were found complete",
    built: "at a database's first fraud write",
    bound: "weak: as long as the binding",
  },
  "fraud.rules": {
    holds: "the enabled rules, compiled, and when they were read, by D1 binding",
    built: "at the first decision",
    bound: "weak; read again after 5 s, and at once after a PUT in this isolate",
  },
  "fraud.rule-language": {
    holds: "the CEL environment rules are checked against",
    built: "at the first rule compiled",
    bound: "one",
  },
  "fraud.drift": {
    holds: "the last 7 days' drift report /metrics shows, by fraud model",
    built: "at the first scrape",
    bound: "the fraud models; read again after 5 minutes",
  },
  "fraud.stripe-keys": {
    holds: "Stripe webhook secrets' HMAC CryptoKeys, by secret",
    built: "at a secret's first event",
    bound: "4 (the oldest dropped: a rotation adds one)",
  },
  "fraud.adyen-keys": {
    holds: "Adyen HMAC CryptoKeys, by configured hex value",
    built: "at a value's first notification",
    bound: "4 (the oldest dropped: a rotation adds one)",
  },
  "keys.bootstrap": {
    holds: "the API_KEYS bootstrap keys' SHA-256 digests, for one API_KEYS value",
    built: "at the first authenticated request",
    bound: "one value",
  },
  "keys.lookups": {
    holds: "stored keys' lookups by hash, found or not",
    built: "at a key's first request",
    bound: "4,096; 10 s each (a revocation elsewhere reaches this isolate within 10 s)",
  },
  "keys.last-used": {
    holds: "when each stored key's last use was written",
    built: "at a key's request",
    bound: "4,096 keys (emptied when full); written once a minute at most",
  },
  "keys.auth-failures": {
    holds: "failed authentications by reason (for /metrics)",
    built: "at a failure",
    bound: "the reasons",
  },
  "keys.audit-pruned": {
    holds: "when this isolate last pruned the audit trail",
    built: "at the first audited request",
    bound: "one; pruned once an hour",
  },
  "keys.settlements": {
    holds: "per limited key, its ended generations' settlements waiting for its next reservation",
    built: "when a generation ends within 250 ms of the key's last reservation",
    bound: "4,096 keys; each sent within 250 ms",
  },
  "keys.reservations": {
    holds: "per limited key, when it last reserved and whether it came in a burst",
    built: "at a key's reservation",
    bound: "4,096 keys",
  },
  "http.body-limits": {
    holds: "the body-limit middleware, by MAX_BODY_BYTES value",
    built: "at a value's first request",
    bound: "configured values",
  },
  "openai.served-since": {
    holds: "when this isolate began serving (`created` in /v1/models)",
    built: "at the first /v1/models",
    bound: "one",
  },
} as const satisfies Record<string, MemoSpec>;

export type MemoName = keyof typeof MEMOS;
