// The origin's service routes, as vLLM names them: /health (200 once every model has
// loaded; 503 while loading, when one failed or while draining), /v1/models (vLLM's
// ModelList of the text-generation models) and Prometheus /metrics.
import { Hono } from "hono";
import type { Drain } from "../http/drain";
import type { ModelHost } from "../model-host";

export function serviceRoutes(host: ModelHost, drain: Drain): Hono {
  const app = new Hono();
  app.get("/health", (c) => {
    const models = [...host.models.values()];
    const status = drain.draining
      ? "draining"
      : models.some((model) => model.status === "loading")
        ? "loading"
        : models.every((model) => model.status === "ready")
          ? "ready"
          : "degraded";
    const failures = Object.fromEntries(
      models
        .filter((model) => model.failure !== undefined)
        .map((model) => [model.manifest.name, model.failure]),
    );
    return c.json({ status, failures }, status === "ready" ? 200 : 503);
  });
  app.get("/v1/models", (c) => {
    const created = Math.floor(Date.now() / 1000);
    const data = [...host.models.values()].flatMap((model) =>
      model.manifest.kind === "generation"
        ? [
            {
              id: model.manifest.name,
              object: "model",
              created,
              owned_by: "edge-inference",
              root: model.manifest.name,
              parent: null,
              max_model_len: model.manifest.generation.contextLength,
              permission: [],
            },
          ]
        : [],
    );
    return c.json({ object: "list", data });
  });
  app.get("/metrics", (c) =>
    c.text(host.metrics.render(), 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    }),
  );
  return app;
}
