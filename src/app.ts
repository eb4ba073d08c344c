// The Hono app: middleware order, route mounting, and the single error renderer.
import { OpenAPIHono } from "@hono/zod-openapi";
import { except } from "hono/combine";
import { requestId } from "hono/request-id";
import { classifyRoutes } from "./routes/classify";
import { renderErrors } from "./routes/errors";
import { fraudRoutes } from "./routes/fraud";
import { requireApiKey } from "./routes/middleware/auth";
import { limitBody, requireJson, requireMediaType } from "./routes/middleware/body";
import { IMAGE_MEDIA_TYPES } from "./routes/image-input";
import { metricsRoutes } from "./routes/metrics";
import { modelRoutes } from "./routes/models";
import { oipRoutes } from "./routes/oip";
import { imageRoutes } from "./routes/images";
import { openaiRoutes } from "./routes/openai";
import { responsesRoutes } from "./routes/openai/responses-api";
import { runRoutes } from "./routes/run";
import { defaultServices, fraudStores, type FraudStores } from "./compose";
import { documentApi } from "./routes/openapi";
import { referenceRoutes } from "./routes/reference";
import { provideServices, type AppEnv } from "./routes/services";
import { adyenWebhook } from "./routes/webhooks/adyen";
import { tokenizeRoutes } from "./routes/tokenize";
import { stripeWebhook } from "./routes/webhooks/stripe";
import type { Services } from "./tasks";

/** Builds the app from what src/compose.ts builds; tests pass their own services (e.g. a registry reading from R2). */
export function createApp(
  servicesFor: (env: Env) => Services = defaultServices,
  storesFor: (env: Env) => FraudStores = fraudStores,
) {
  const app = new OpenAPIHono<AppEnv>();

  app.use(requestId());
  app.use(provideServices(servicesFor, storesFor));
  // Payment webhooks authenticate by their providers' signatures, not API keys.
  app.use("/v1/*", except("/v1/webhooks/*", requireApiKey));
  app.use("/v2/models/*", requireApiKey);
  app.use("/metrics", requireApiKey);
  app.use("/v2/repository/*", requireApiKey);
  // vLLM serves these two at the root as well as under /v1.
  app.use("/tokenize", requireApiKey);
  app.use("/detokenize", requireApiKey);
  // /v2 bodies are read by the OIP codec (src/protocols/oip-body.ts): JSON with or without a
  // Content-Type, gzip/deflate, Triton binary tensors, bounded by MAX_BODY_BYTES raw and inflated.
  // /v1/classify also takes images: raw PNG/JPEG bodies and multipart forms.
  app.on(
    "POST",
    "/v1/classify",
    requireMediaType(["application/json", "multipart/form-data", ...IMAGE_MEDIA_TYPES]),
    limitBody,
  );
  for (const path of [
    "/v1/run/*",
    "/v1/fraud/*",
    "/v1/webhooks/*",
    "/tokenize",
    "/detokenize",
    "/v1/tokenize",
    "/v1/detokenize",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/responses",
    "/v1/images/generations",
  ]) {
    app.on("POST", path, requireJson, limitBody);
  }

  app.route("/", classifyRoutes);
  app.route("/", fraudRoutes);
  app.route("/", stripeWebhook);
  app.route("/", adyenWebhook);
  app.route("/", modelRoutes);
  app.route("/", oipRoutes);
  app.route("/", metricsRoutes);
  app.route("/", tokenizeRoutes);
  app.route("/", openaiRoutes);
  app.route("/", responsesRoutes);
  app.route("/", imageRoutes);
  app.route("/", runRoutes);

  documentApi(app);
  app.route("/", referenceRoutes);

  renderErrors(app);

  return app;
}
