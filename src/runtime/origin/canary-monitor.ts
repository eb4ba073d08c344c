// This isolate's watch over each model's canary: the canary's attempts over a sliding window,
// and the rollback to the stable version once its error rate or p95 latency crosses a threshold.
// With a shared store, a rollback decided by one isolate is published there and every other
// isolate adopts it within SHARED_POLL_MS: all traffic moves back, not one isolate's.
import { keep } from "../../memos";
import type { CanaryConfig } from "./canary-config";

/** One attempt on a canary replica: failed, or answered after `latencyMs`. */
interface Sample {
  at: number;
  ok: boolean;
  latencyMs: number;
}

/** Why a canary was rolled back, with the window's figures that decided it. */
export interface Rollback {
  reason: "error_rate" | "latency";
  errorRate: number;
  p95Ms: number;
  samples: number;
  at: number;
}

/** Where isolates share their rollbacks (D1: canary-rollbacks.ts), keyed by model and config. */
export interface SharedRollbacks {
  publish(model: string, configKey: string, rollback: Rollback): Promise<void>;
  read(model: string, configKey: string): Promise<Rollback | undefined>;
}

/** How often an isolate asks the shared store whether another rolled a canary back. */
export const SHARED_POLL_MS = 10_000;

interface ModelWatch {
  /** The configuration this watch is for: a new value starts afresh (roll forward). */
  configKey: string;
  samples: Sample[];
  rollback?: Rollback;
  /** Who decided the rollback: this isolate, or another (read from the shared store). */
  scope?: "isolate" | "shared";
  /** When this isolate last asked the shared store (a read in flight counts as asked). */
  polledAt?: number;
  /** Requests by version and outcome since this configuration was first seen. */
  counts: Map<string, number>;
}

export interface CanaryStatus {
  model: string;
  stable: string;
  canary: string;
  weight: number;
  rollback?: Rollback;
  /** Who decided the rollback: this isolate, or another through the shared store. */
  scope?: "isolate" | "shared";
  counts: ReadonlyMap<string, number>;
}

export interface CanaryMonitor {
  /** Whether the model's canary is rolled back under `canary` (a new configuration: not yet). */
  rolledBack(model: string, canary: CanaryConfig): boolean;
  /** Counts an attempt on a `version` replica; on the canary's, may decide a rollback. */
  record(
    model: string,
    canary: CanaryConfig,
    version: string,
    ok: boolean,
    latencyMs: number,
  ): void;
  /** Every watched model's split and state (for /metrics). */
  statuses(): CanaryStatus[];
  /** Shares rollbacks with other isolates through `store` (none: this isolate's alone). */
  share(store: SharedRollbacks | undefined): void;
}

/** The 95th percentile of `values` (nearest rank). */
export function p95(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1]!;
}

/** The rollback the window calls for, if any. */
export function judge(samples: readonly Sample[], canary: CanaryConfig, at: number) {
  if (samples.length < canary.minRequests) return undefined;
  const failed = samples.filter((sample) => !sample.ok).length;
  const errorRate = failed / samples.length;
  const p95Ms = p95(samples.filter((sample) => sample.ok).map((sample) => sample.latencyMs));
  const figures = { errorRate, p95Ms, samples: samples.length, at };
  if (errorRate > canary.maxErrorRate) return { reason: "error_rate" as const, ...figures };
  if (p95Ms > canary.maxLatencyMs) return { reason: "latency" as const, ...figures };
  return undefined;
}

export interface CanaryMonitorOptions {
  now?: () => number;
  /** Where the rollback's structured line goes (default: console.error). */
  log?: (line: string) => void;
}

/** A watch per model, keyed by its canary configuration. */
export function createCanaryMonitor(options: CanaryMonitorOptions = {}): CanaryMonitor {
  const { now = Date.now, log = (line: string) => console.error(line) } = options;
  const watches = new Map<string, ModelWatch & { canary: CanaryConfig }>();
  let shared: SharedRollbacks | undefined;
  const logRollback = (model: string, canary: CanaryConfig, rollback: Rollback, scope: string) =>
    log(
      JSON.stringify({
        event: "canary_rolled_back",
        model,
        stable: canary.stable,
        canary: canary.canary,
        reason: rollback.reason,
        errorRate: Number(rollback.errorRate.toFixed(4)),
        p95Ms: rollback.p95Ms,
        samples: rollback.samples,
        windowSeconds: canary.windowSeconds,
        maxErrorRate: canary.maxErrorRate,
        maxLatencyMs: canary.maxLatencyMs,
        scope,
      }),
    );
  /** Asks the shared store at most every SHARED_POLL_MS; the answer applies when it comes. */
  const poll = (model: string, found: ModelWatch & { canary: CanaryConfig }) => {
    const at = now();
    if (shared === undefined || found.rollback !== undefined) return;
    if (found.polledAt !== undefined && at - found.polledAt < SHARED_POLL_MS) return;
    found.polledAt = at;
    shared
      .read(model, found.configKey)
      .then((rollback) => {
        if (rollback === undefined || found.rollback !== undefined) return;
        found.rollback = rollback;
        found.scope = "shared";
        found.samples = [];
        logRollback(model, found.canary, rollback, "shared");
      })
      .catch((error: unknown) =>
        log(JSON.stringify({ event: "canary_shared_state_unreadable", error: String(error) })),
      );
  };
  const watch = (model: string, canary: CanaryConfig) => {
    const configKey = JSON.stringify(canary);
    let found = watches.get(model);
    if (found === undefined || found.configKey !== configKey) {
      found = { configKey, canary, samples: [], counts: new Map() };
      watches.set(model, found);
    }
    return found;
  };
  return {
    rolledBack(model, canary) {
      const found = watch(model, canary);
      poll(model, found);
      return found.rollback !== undefined;
    },
    share(store) {
      shared = store;
    },
    record(model, canary, version, ok, latencyMs) {
      const found = watch(model, canary);
      const counted = `${version}\n${ok ? "ok" : "error"}`;
      found.counts.set(counted, (found.counts.get(counted) ?? 0) + 1);
      if (version !== canary.canary || found.rollback !== undefined) return;
      const at = now();
      const since = at - canary.windowSeconds * 1000;
      found.samples.push({ at, ok, latencyMs });
      while (found.samples.length > 0 && found.samples[0]!.at < since) found.samples.shift();
      // The window never holds more than it needs to decide (bounded memory under load).
      if (found.samples.length > 10 * canary.minRequests + 1_000) found.samples.shift();
      const rollback = judge(found.samples, canary, at);
      if (rollback === undefined) return;
      found.rollback = rollback;
      found.scope = "isolate";
      found.samples = [];
      logRollback(model, canary, rollback, "isolate");
      shared
        ?.publish(model, found.configKey, rollback)
        .catch((error: unknown) =>
          log(JSON.stringify({ event: "canary_rollback_not_shared", error: String(error) })),
        );
    },
    statuses: () =>
      [...watches].map(([model, found]) => ({
        model,
        stable: found.canary.stable,
        canary: found.canary.canary,
        weight: found.canary.weight,
        ...(found.rollback === undefined
          ? {}
          : { rollback: found.rollback, scope: found.scope ?? "isolate" }),
        counts: found.counts,
      })),
  };
}

/** Prometheus lines for the monitor's models: the rollback gauge and requests by version. */
export function canaryMetricLines(statuses: readonly CanaryStatus[]): string[] {
  const lines = [
    "# HELP edge_canary_rolled_back Whether the model's canary is rolled back in this isolate " +
      "(all traffic on the stable version); scope: decided here (isolate) or by another " +
      "isolate (shared).",
    "# TYPE edge_canary_rolled_back gauge",
  ];
  for (const status of statuses)
    lines.push(
      `edge_canary_rolled_back{model="${status.model}",stable="${status.stable}",` +
        `canary="${status.canary}"${status.scope === undefined ? "" : `,scope="${status.scope}"`}} ` +
        `${status.rollback === undefined ? 0 : 1}`,
    );
  lines.push(
    "# HELP edge_canary_weight_percent The canary's configured share of sticky keys.",
    "# TYPE edge_canary_weight_percent gauge",
    ...statuses.map(
      (status) => `edge_canary_weight_percent{model="${status.model}"} ${status.weight}`,
    ),
    "# HELP edge_model_version_attempts_total Attempts on the model's replicas by version and " +
      "outcome, in this isolate, since its canary configuration was first seen.",
    "# TYPE edge_model_version_attempts_total counter",
  );
  for (const status of statuses)
    for (const [key, count] of status.counts) {
      const [version, outcome] = key.split("\n");
      lines.push(
        `edge_model_version_attempts_total{model="${status.model}",version="${version}",` +
          `outcome="${outcome}"} ${count}`,
      );
    }
  return lines;
}

/** The isolate's watch, shared by its runtimes and read by /metrics. */
export const canaryMonitor = keep("origin.canary", createCanaryMonitor());
