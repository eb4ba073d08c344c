// The origin's HTTP surface: its own Hono app over its own engines. Open Inference
// Protocol v2 for tensor models, vLLM's /v1/completions for text-generation models,
// /health, /v1/models and /metrics. Model routes need the Bearer key when one is set.
import { Hono } from "hono";
import type { OriginConfig } from "./config";
import { requireKey } from "./http/auth";
import { renderErrors } from "./http/errors";
import type { ModelHost } from "./model-host";
import { completionRoutes } from "./routes/completions";
import { generateStreamRoutes } from "./routes/generate-stream";
import { oipRoutes } from "./routes/oip";
import { serviceRoutes } from "./routes/service";

export function createOriginApp(host: ModelHost, config: OriginConfig): Hono {
  const app = new Hono();
  const auth = requireKey(config.apiKey);
  app.use("/v2/models/*", auth);
  app.use("/v1/*", auth);
  app.route("/", serviceRoutes(host));
  app.route("/", oipRoutes(host, config.maxBodyBytes));
  app.route("/", completionRoutes(host, config));
  app.route("/", generateStreamRoutes(host, config.maxBodyBytes));
  renderErrors(app);
  return app;
}
