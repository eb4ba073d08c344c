// GET /v1/fraud/performance: live precision and recall of the FRAUD and SUSPECT labels over a
// window of decisions, from the outcomes providers reported (disputes, chargebacks, warnings).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { requireSchema } from "../../tasks/fraud/context";
import { KEY_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";

const DAY_MS = 24 * 60 * 60 * 1000;
/** The default window: the last 90 days (disputes arrive weeks after the payment). */
const DEFAULT_DAYS = 90;

const Rates = z.object({
  FRAUD: z.number().nullable(),
  SUSPECT: z.number().nullable().openapi({ description: "Flagged SUSPECT or FRAUD" }),
});

const PerformanceResponse = z
  .object({
    since: z.string(),
    until: z.string(),
    decisions: z.number().int().openapi({ description: "Decisions made in the window" }),
    labelled: z.number().int().openapi({ description: "Of those, payments with an outcome" }),
    fraudulent: z.number().int().openapi({ description: "Payments an outcome called fraud" }),
    precision: Rates.openapi({
      description: "Flagged payments that were fraud / flagged payments (null: none flagged)",
    }),
    recall: Rates.openapi({
      description: "Fraud payments flagged / fraud payments (null: no fraud reported)",
    }),
    flagged: z.object({ FRAUD: z.number().int(), SUSPECT: z.number().int() }),
    caught: z
      .object({ FRAUD: z.number().int(), SUSPECT: z.number().int() })
      .openapi({ description: "Flagged payments that an outcome called fraud" }),
    unscored_outcomes: z
      .number()
      .int()
      .openapi({ description: "Outcomes received in the window for payments never scored" }),
  })
  .openapi("FraudPerformance");

const Instant = z.iso.datetime({ offset: true }).optional();

const route = createRoute({
  method: "get",
  path: "/performance",
  operationId: "fraudPerformance",
  summary: "Live precision and recall of the fraud labels from reported outcomes",
  request: {
    query: z.object({
      since: Instant.openapi({ description: "Start (ISO 8601); default 90 days before until" }),
      until: Instant.openapi({ description: "End, exclusive (ISO 8601); default now" }),
    }),
  },
  responses: {
    200: {
      description: "Counts and rates over the window's decisions",
      content: { "application/json": { schema: PerformanceResponse } },
    },
    ...problemResponses("openai", 400, KEY_ERRORS, 503),
  },
});

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);

export const fraudPerformanceRoutes = new OpenAPIHono<AppEnv>({
  defaultHook: validationHook,
}).openapi(route, async (c) => {
  const query = c.req.valid("query");
  const until = query.until === undefined ? Date.now() : Date.parse(query.until);
  const since = query.since === undefined ? until - DEFAULT_DAYS * DAY_MS : Date.parse(query.since);
  if (!(since < until))
    throw new ServiceError(400, "invalid_request", "since must be before until", {
      field: "since",
    });
  const stores = c.var.fraudStores(c.env);
  await requireSchema(stores);
  const window = { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
  const counts = await stores.labelCounts(window.since, window.until);
  return c.json(
    {
      ...window,
      decisions: counts.decisions,
      labelled: counts.labelled,
      fraudulent: counts.fraudulent,
      precision: {
        FRAUD: ratio(counts.caught.FRAUD, counts.flagged.FRAUD),
        SUSPECT: ratio(counts.caught.SUSPECT, counts.flagged.SUSPECT),
      },
      recall: {
        FRAUD: ratio(counts.caught.FRAUD, counts.fraudulent),
        SUSPECT: ratio(counts.caught.SUSPECT, counts.fraudulent),
      },
      flagged: counts.flagged,
      caught: counts.caught,
      unscored_outcomes: counts.unscoredOutcomes,
    },
    200,
  );
});
