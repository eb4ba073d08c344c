// The payment providers' webhooks, under /v1/webhooks: they authenticate by their providers'
// signatures (checked in the fraud task's sources), not by API keys.
import { OpenAPIHono } from "@hono/zod-openapi";
import { limitBody, requireJson } from "../http/body";
import type { AppEnv } from "../http/services";
import { adyenWebhook } from "./adyen";
import { documentWebhooks } from "./openapi";
import { stripeWebhook } from "./stripe";

export const webhookRoutes = new OpenAPIHono<AppEnv>();
webhookRoutes.on("POST", "*", requireJson, limitBody);
// Plain routes (the body is read raw for the signature), documented here.
documentWebhooks(webhookRoutes.openAPIRegistry);
webhookRoutes.route("/stripe", stripeWebhook);
webhookRoutes.route("/adyen", adyenWebhook);
