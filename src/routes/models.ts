// GET /v1/models: what this deployment serves, where each model runs and how it scored.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./services";

export const modelRoutes = new OpenAPIHono<AppEnv>().get("/v1/models", (c) =>
  c.json({
    object: "list",
    data: c.get("services").list().map(({ manifest, state }) => ({
      id: manifest.name,
      object: "model",
      owned_by: "edge-inference",
      version: manifest.version,
      task: manifest.task,
      runtime: manifest.runtime,
      state: state(),
      ...("labels" in manifest ? { labels: manifest.labels } : {}),
      inputs: manifest.inputs,
      outputs: manifest.outputs,
      sha256: manifest.sha256,
      bytes: manifest.bytes,
      ...("evaluation" in manifest ? { evaluation: manifest.evaluation } : {}),
    })),
  }),
);
