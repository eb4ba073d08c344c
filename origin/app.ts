// The origin's HTTP surface: its own Hono app over its own engines. Open Inference
// Protocol v2 for tensor models, vLLM's /v1/completions for text-generation models,
// /health, /v1/models and /metrics. Model routes need the Bearer key when one is set; once
// draining, new work is refused. With tracing on, every POST gets a server span.
import { Hono } from "hono";
import type { OriginConfig } from "./config";
import { requireKey } from "./http/auth";
import { Drain } from "./http/drain";
import { renderErrors } from "./http/errors";
import { faulty, injectFaults } from "./http/faults";
import type { ModelHost } from "./model-host";
import { completionRoutes } from "./routes/completions";
import { generateStreamRoutes } from "./routes/generate-stream";
import { oipRoutes } from "./routes/oip";
import { serviceRoutes } from "./routes/service";
import type { Tracing } from "./tracing";

export function createOriginApp(
  host: ModelHost,
  config: OriginConfig,
  drain: Drain = new Drain(),
  tracing?: Tracing,
): Hono {
  const app = new Hono();
  // First, so that refused requests (draining, unauthorized) have their span too.
  if (tracing !== undefined) app.use("*", tracing.middleware);
  app.use("*", drain.admission());
  const auth = requireKey(config.apiKey);
  app.use("/v2/models/*", auth);
  app.use("/v1/*", auth);
  if (faulty(config.faults)) app.use("/v1/completions", injectFaults(config.faults));
  app.route("/", serviceRoutes(host, drain));
  app.route("/", oipRoutes(host, config.maxBodyBytes, drain));
  app.route("/", completionRoutes(host, config, drain));
  app.route("/", generateStreamRoutes(host, config.maxBodyBytes, drain));
  renderErrors(app);
  return app;
}
