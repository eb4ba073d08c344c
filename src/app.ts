// The Hono app: each protocol's routes mounted by prefix, each declaring its own middleware
// (keys, body guards) beside its routes; the OpenAPI document; the single error renderer.
import { OpenAPIHono } from "@hono/zod-openapi";
import { requestId } from "hono/request-id";
import { withTrace } from "./runtime/origin/trace-context";
import { fraudStores } from "./compose";
import { isolate } from "./isolate";
import { keyRoutes } from "./routes/admin/keys";
import { metricsRoutes } from "./routes/admin/metrics";
import { documentApi } from "./routes/admin/openapi";
import { referenceRoutes } from "./routes/admin/reference";
import { classifyRoutes } from "./routes/classify";
import { fraudRoutes } from "./routes/fraud";
import { renderErrors } from "./routes/http/render-errors";
import { countRequests } from "./routes/http/request-metrics";
import { provideServices, type AppEnv } from "./routes/http/services";
import { oipRoutes } from "./routes/oip";
import { playgroundRoutes } from "./routes/playground";
import { chatRoutes, completionRoutes } from "./routes/openai";
import { imageRoutes } from "./routes/openai/images";
import { modelRoutes } from "./routes/openai/models";
import { responsesRoutes } from "./routes/openai/responses-api";
import { tokenizeRoutes } from "./routes/vllm";
import { webhookRoutes } from "./routes/webhooks";
import { runRoutes } from "./routes/workers-ai";
import type { Services } from "./tasks";
import type { FraudStores } from "./tasks/fraud/ledger/ledger";

/**
 * Builds the app from what src/compose.ts builds; tests pass their own services (e.g. a registry
 * reading from R2).
 */
export function createApp(
  servicesFor: (env: Env) => Services = isolate.services,
  storesFor: (env: Env) => FraudStores = fraudStores,
) {
  const app = new OpenAPIHono<AppEnv>();
  app.use(countRequests);
  app.use(requestId());
  // Every origin call of the request carries its trace and id (runtime/origin/trace-context).
  app.use((c, next) =>
    withTrace(
      {
        traceparent: c.req.header("traceparent"),
        tracestate: c.req.header("tracestate"),
        requestId: c.get("requestId"),
      },
      next,
    ),
  );
  app.use(provideServices(servicesFor, storesFor));

  // OpenAI (and vLLM's extensions of it).
  app.route("/v1/chat", chatRoutes);
  app.route("/v1/completions", completionRoutes);
  app.route("/v1/responses", responsesRoutes);
  app.route("/v1/images", imageRoutes);
  app.route("/v1/models", modelRoutes);
  // vLLM's tokenizer endpoints, at the root and under /v1 as vLLM serves them.
  app.route("/", tokenizeRoutes(""));
  app.route("/v1", tokenizeRoutes("V1"));
  // Workers AI's binding shapes.
  app.route("/v1/run", runRoutes);
  // KServe's Open Inference Protocol v2 with Triton's extensions (paths under /v2).
  app.route("/", oipRoutes);
  // This service's own: classification, fraud scores and card views, the payment webhooks.
  app.route("/v1/classify", classifyRoutes);
  app.route("/v1/fraud", fraudRoutes);
  app.route("/v1/webhooks", webhookRoutes);
  // Operators: Prometheus metrics; readers: the API reference page (public, like the document).
  app.route("/", metricsRoutes);
  app.route("/admin/keys", keyRoutes);
  app.route("/", referenceRoutes);
  // The playground's page and its files (public).
  app.route("/", playgroundRoutes);

  documentApi(app);
  renderErrors(app);
  return app;
}
