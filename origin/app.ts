// The reference GPU origin's HTTP surface: the Open Inference Protocol v2 routes of the
// edge itself (same validation, same errors), in front of native onnxruntime sessions.
import { OpenAPIHono } from "@hono/zod-openapi";
import { requestId } from "hono/request-id";
import { renderErrors } from "../src/routes/errors";
import { requireApiKey } from "../src/routes/middleware/auth";
import { limitBody, requireJson } from "../src/routes/middleware/body";
import { oipRoutes } from "../src/routes/oip";
import { provideServices, type AppEnv } from "../src/routes/services";
import type { Services } from "../src/tasks";

export function createOriginApp(services: Services) {
  const app = new OpenAPIHono<AppEnv>();
  app.use(requestId());
  app.use(provideServices(() => services));
  app.use("/v2/models/*", requireApiKey);
  app.on("POST", "/v2/models/*", requireJson, limitBody);
  app.route("/", oipRoutes);
  renderErrors(app);
  return app;
}
