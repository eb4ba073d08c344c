// Where a model's origin is and how long each phase of a call to it may take. Timeouts are
// per phase, not one total: a long generation is fine as long as tokens keep coming.
export interface OriginConfig {
  /** Base URL of the origin, e.g. https://gpu.example.com; unset: origin models are not ready. */
  url: string | undefined;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | undefined;
  /** Until the origin's response headers arrive (for a tensor call, its whole answer). */
  timeoutMs: number;
  /** Generation: from the request until the first token. */
  firstTokenTimeoutMs?: number;
  /** Generation: the longest gap between two chunks of the stream. */
  idleTimeoutMs?: number;
}

/** No GPU origin configured: `runtime: "origin"` models are never ready. */
export const NO_ORIGIN: OriginConfig = { url: undefined, apiKey: undefined, timeoutMs: 30_000 };

export const DEFAULT_FIRST_TOKEN_TIMEOUT_MS = 60_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
