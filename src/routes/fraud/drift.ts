// GET /v1/fraud/drift: score and feature drift of a window's decisions against the model's
// reference distribution (PSI per monitored feature, thresholds 0.1 and 0.25).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { requireSchema } from "../../tasks/fraud/context";
import { MIN_SAMPLE, windowDrift } from "../../tasks/fraud/drift/drift";
import { PSI_DRIFT, PSI_MODERATE } from "../../tasks/fraud/drift/psi";
import { referenceFor } from "../../tasks/fraud/drift/reference";
import { KEY_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";

const DAY_MS = 24 * 60 * 60 * 1000;

const DriftResponse = z
  .object({
    since: z.string(),
    until: z.string(),
    model: z.string(),
    reference: z.string().openapi({ description: "How the reference distribution was made" }),
    sample: z.number().int(),
    min_sample: z.number().int().openapi({ description: "Below it, nothing is signalled" }),
    thresholds: z.object({ moderate: z.number(), drift: z.number() }),
    features: z.record(
      z.string(),
      z.object({ psi: z.number(), status: z.enum(["stable", "moderate", "drift"]) }),
    ),
    drifted: z.array(z.string()).openapi({ description: "Features at or above the drift PSI" }),
    drift: z.boolean().openapi({ description: "The signal: any monitored feature drifted" }),
  })
  .openapi("FraudDrift");

const Instant = z.iso.datetime({ offset: true }).optional();

const route = createRoute({
  method: "get",
  path: "/drift",
  operationId: "fraudDrift",
  summary: "Score and feature drift of recent decisions against the training distribution",
  request: {
    query: z.object({
      since: Instant.openapi({ description: "Default: 7 days before until" }),
      until: Instant.openapi({ description: "Default: now (exclusive)" }),
    }),
  },
  responses: {
    200: {
      description: "PSI per monitored feature and the drift signal",
      content: { "application/json": { schema: DriftResponse } },
    },
    ...problemResponses("openai", 400, KEY_ERRORS, 503),
  },
});

export const fraudDriftRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(
  route,
  async (c) => {
    const query = c.req.valid("query");
    const until = query.until === undefined ? Date.now() : Date.parse(query.until);
    const since = query.since === undefined ? until - 7 * DAY_MS : Date.parse(query.since);
    if (!(since < until))
      throw new ServiceError(400, "invalid_request", "since must be before until", {
        field: "since",
      });
    const reference = referenceFor(c.env.FRAUD_MODEL);
    if (reference === undefined)
      throw new ServiceError(
        503,
        "not_configured",
        `FRAUD_MODEL "${c.env.FRAUD_MODEL}" ships no drift reference`,
      );
    const stores = c.var.fraudStores(c.env);
    await requireSchema(stores);
    const window = { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
    const report = await windowDrift(stores, reference.features, window.since, window.until);
    if (report.drifted.length > 0)
      console.warn(JSON.stringify({ event: "fraud_drift", ...window, drifted: report.drifted }));
    return c.json(
      {
        ...window,
        model: reference.model,
        reference: reference.source,
        sample: report.sample,
        min_sample: MIN_SAMPLE,
        thresholds: { moderate: PSI_MODERATE, drift: PSI_DRIFT },
        features: report.features,
        drifted: report.drifted,
        drift: report.drifted.length > 0,
      },
      200,
    );
  },
);
