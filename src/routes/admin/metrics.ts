// GET /metrics: this isolate's figures in Prometheus text — the WASM memory onnxruntime-web holds,
// the sessions it has created, its dynamic batchers' runs and calls, each memo's entries, which
// models are loaded, failed authentications by reason, each canary's split, attempts by version and
// rollback, (tasks/metrics/edge-metrics) requests, their durations, tokens and time to first
// token — and, from D1 (shared by every isolate), the fraud
// labels' live precision and recall over the last 30 days and the drift of the last 7 days'
// decisions (read again at most every 5 minutes).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { memoEntries } from "../../memos";
import {
  batchCounts,
  canaryMetricLines,
  canaryMonitor,
  wasmMemoryBytes,
  wasmSessionsCreated,
} from "../../runtime";
import { authFailures } from "../../tasks/keys/auth-failures";
import { renderEdgeMetrics } from "../../tasks/metrics/edge-metrics";
import { problemResponses, KEY_ERRORS } from "../http/problems";
import type { AppEnv } from "../http/services";
import { requireScope } from "../http/auth";
import type { FraudStores } from "../../tasks/fraud/ledger/ledger";
import { recentDrift } from "../../tasks/fraud/drift/drift";
import { referenceFor } from "../../tasks/fraud/drift/reference";

const WINDOW_DAYS = 30;
const DRIFT_DAYS = 7;

/** The drift gauges of the configured fraud model (none when it ships no reference). */
async function driftLines(stores: FraudStores, model: string): Promise<string[]> {
  const reference = referenceFor(model);
  if (reference === undefined) return [];
  let report: Awaited<ReturnType<typeof recentDrift>>;
  try {
    report = await recentDrift(stores, model, reference.features, DRIFT_DAYS * 86_400_000);
  } catch (error) {
    // The precision and recall still come.
    console.warn(JSON.stringify({ event: "fraud_drift_unavailable", error: String(error) }));
    return [];
  }
  const labels = `model="${reference.model}",window="${DRIFT_DAYS}d"`;
  return [
    "# HELP edge_fraud_drift_psi Population stability index of a monitored feature of the " +
      "window's decisions against the training distribution (0.1 moderate, 0.25 drift).",
    "# TYPE edge_fraud_drift_psi gauge",
    ...Object.entries(report.features).map(
      ([feature, { psi }]) => `edge_fraud_drift_psi{feature="${feature}",${labels}} ${psi}`,
    ),
    "# HELP edge_fraud_drift 1 when a monitored feature crossed the drift threshold (with at " +
      "least 100 decisions in the window), else 0.",
    "# TYPE edge_fraud_drift gauge",
    `edge_fraud_drift{${labels}} ${report.drifted.length > 0 ? 1 : 0}`,
    "# HELP edge_fraud_drift_sample Decisions the drift was computed over.",
    "# TYPE edge_fraud_drift_sample gauge",
    `edge_fraud_drift_sample{${labels}} ${report.sample}`,
  ];
}

/**
 * The fraud gauges, from the decisions of the last WINDOW_DAYS and their outcomes; none while D1
 * lacks the schema or cannot answer (the other gauges still come).
 */
async function fraudLines(stores: FraudStores, model: string): Promise<string[]> {
  try {
    if ((await stores.missingMigrations()).length > 0) return [];
    const until = Date.now();
    const counts = await stores.labelCounts(
      new Date(until - WINDOW_DAYS * 86_400_000).toISOString(),
      new Date(until).toISOString(),
    );
    const window = `window="${WINDOW_DAYS}d"`;
    const rate = (part: number, whole: number) => (whole === 0 ? "NaN" : String(part / whole));
    const labels = ["FRAUD", "SUSPECT"] as const;
    return [
      "# HELP edge_fraud_decisions Fraud decisions made in the window.",
      "# TYPE edge_fraud_decisions gauge",
      `edge_fraud_decisions{${window}} ${counts.decisions}`,
      "# HELP edge_fraud_fraudulent Decided payments an outcome (dispute, chargeback, warning) " +
        "called fraud.",
      "# TYPE edge_fraud_fraudulent gauge",
      `edge_fraud_fraudulent{${window}} ${counts.fraudulent}`,
      "# HELP edge_fraud_precision Flagged payments that were fraud / flagged payments " +
        "(SUSPECT: flagged SUSPECT or FRAUD).",
      "# TYPE edge_fraud_precision gauge",
      ...labels.map(
        (label) =>
          `edge_fraud_precision{label="${label}",${window}} ` +
          rate(counts.caught[label], counts.flagged[label]),
      ),
      "# HELP edge_fraud_recall Fraud payments flagged / fraud payments.",
      "# TYPE edge_fraud_recall gauge",
      ...labels.map(
        (label) =>
          `edge_fraud_recall{label="${label}",${window}} ` +
          rate(counts.caught[label], counts.fraudulent),
      ),
      ...(await driftLines(stores, model)),
    ];
  } catch (error) {
    console.warn(JSON.stringify({ event: "fraud_metrics_unavailable", error: String(error) }));
    return [];
  }
}

const metricsRoute = createRoute({
  method: "get",
  path: "/metrics",
  operationId: "metrics",
  summary: "This isolate's gauges (Prometheus text format)",
  responses: {
    200: {
      description: "Prometheus exposition format 0.0.4",
      content: { "text/plain": { schema: z.string() } },
    },
    ...problemResponses("problem", KEY_ERRORS),
  },
});

/**
 * Per isolate (a deployment has many); the memory benchmark (scripts/measure-memory.mjs) reads it
 * beside the inspector's V8 heap figure.
 */
export const metricsRoutes = new OpenAPIHono<AppEnv>();
metricsRoutes.use("/metrics", requireScope("metrics"));
metricsRoutes.openapi(metricsRoute, async (c) => {
  const models = c.get("services").list();
  // One read of the batchers for both counters, so runs and calls are of the same moment.
  const batches = batchCounts();
  const lines = [
    "# HELP edge_wasm_memory_bytes Linear memory held by " +
      "onnxruntime-web's WASM instance in this isolate.",
    "# TYPE edge_wasm_memory_bytes gauge",
    `edge_wasm_memory_bytes ${wasmMemoryBytes()}`,
    "# HELP edge_wasm_sessions_created_total Model sessions onnxruntime-web " +
      "has created in this isolate (preloaded ones at start-up).",
    "# TYPE edge_wasm_sessions_created_total counter",
    `edge_wasm_sessions_created_total ${wasmSessionsCreated()}`,
    "# HELP edge_batch_runs_total Model runs a dynamic batcher of this isolate made (Triton's " +
      "execution count); edge_batch_calls_total ÷ this is the mean batch.",
    "# TYPE edge_batch_runs_total counter",
    ...batches.map(([name, { runs }]) => `edge_batch_runs_total{batcher="${name}"} ${runs}`),
    "# HELP edge_batch_calls_total Calls those runs answered (Triton's inference count).",
    "# TYPE edge_batch_calls_total counter",
    ...batches.map(([name, { calls }]) => `edge_batch_calls_total{batcher="${name}"} ${calls}`),
    "# HELP edge_isolate_memo_entries Entries a memo of this isolate holds (src/memos/table.ts " +
      "says what each holds and what bounds it; weak ones cannot be counted).",
    "# TYPE edge_isolate_memo_entries gauge",
    ...memoEntries().flatMap(({ name, entries }) =>
      entries === undefined ? [] : [`edge_isolate_memo_entries{memo="${name}"} ${entries}`],
    ),
    "# HELP edge_model_loaded Whether the model is loaded and verified in this isolate.",
    "# TYPE edge_model_loaded gauge",
    ...models.map(
      (model) =>
        `edge_model_loaded{model="${model.manifest.name}"} ${model.state() === "ready" ? 1 : 0}`,
    ),
    "# HELP edge_auth_failures_total Requests refused by this isolate's key check, by reason " +
      "(missing, malformed, unknown, revoked, not_configured, insufficient_scope).",
    "# TYPE edge_auth_failures_total counter",
    ...authFailures().map(
      ([reason, count]) => `edge_auth_failures_total{reason="${reason}"} ${count}`,
    ),
    ...canaryMetricLines(canaryMonitor.statuses()),
    ...(await fraudLines(c.var.fraudStores(c.env), c.env.FRAUD_MODEL)),
  ];
  return c.text(`${lines.join("\n")}\n${renderEdgeMetrics()}`, 200, {
    "content-type": "text/plain; version=0.0.4; charset=utf-8",
  });
});
