// GET /metrics: this isolate's figures in Prometheus text — the WASM memory onnxruntime-web holds,
// the sessions it has created, which models are loaded, failed authentications by reason, each
// canary's split, attempts by version and rollback, and (tasks/metrics/edge-metrics) requests,
// their durations, tokens and time to first token.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import {
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
metricsRoutes.openapi(metricsRoute, (c) => {
  const models = c.get("services").list();
  const lines = [
    "# HELP edge_wasm_memory_bytes Linear memory held by " +
      "onnxruntime-web's WASM instance in this isolate.",
    "# TYPE edge_wasm_memory_bytes gauge",
    `edge_wasm_memory_bytes ${wasmMemoryBytes()}`,
    "# HELP edge_wasm_sessions_created_total Model sessions onnxruntime-web " +
      "has created in this isolate (preloaded ones at start-up).",
    "# TYPE edge_wasm_sessions_created_total counter",
    `edge_wasm_sessions_created_total ${wasmSessionsCreated()}`,
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
  ];
  return c.text(`${lines.join("\n")}\n${renderEdgeMetrics()}`, 200, {
    "content-type": "text/plain; version=0.0.4; charset=utf-8",
  });
});
