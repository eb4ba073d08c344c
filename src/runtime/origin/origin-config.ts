// Where a model's origin is and how long each phase of a call to it may take. Timeouts are
// per phase, not one total: a long generation is fine as long as tokens keep coming.
import { ServiceError } from "../../errors/service-error";
import type { CanaryConfig } from "./canary-config";
import { parseUrlList, type Replica } from "./pool-config";

export type { Replica } from "./pool-config";

export interface OriginConfig {
  /**
   * Base URL of the origin, e.g. https://gpu.example.com (or several, comma-separated: a pool of
   * equal replicas); unset: origin models are not ready.
   */
  url: string | undefined;
  /** The pool's replicas when configured as one (ORIGIN_POOL); else `url`'s. */
  replicas?: readonly Replica[];
  /** Two versions side by side (ORIGIN_CANARY): the split and its rollback thresholds. */
  canary?: CanaryConfig;
  /** Why the configuration cannot be used (a bad URL or pool); the model is then not ready. */
  configError?: string;
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

/** The replicas of `origin`, or the 503 of a model whose origin is unset or misconfigured. */
export function replicasOf(origin: OriginConfig, model: string): readonly Replica[] {
  if (origin.configError !== undefined)
    throw new ServiceError(
      503,
      "not_configured",
      `Model "${model}" runs on the GPU origin, whose configuration is invalid: ${origin.configError}`,
    );
  if (origin.replicas !== undefined && origin.replicas.length > 0) return origin.replicas;
  const parsed = origin.url ? parseUrlList("the origin URL", origin.url) : { replicas: [] };
  if ("error" in parsed)
    throw new ServiceError(503, "not_configured", `Model "${model}": ${parsed.error}`);
  if (parsed.replicas.length === 0)
    throw new ServiceError(
      503,
      "not_configured",
      `Model "${model}" runs on the GPU origin, and ORIGIN_URL is not set (nor ORIGIN_POOL)`,
    );
  return parsed.replicas;
}
