// GET /v1/fraud/export: a window's decided payments with their outcome labels, featurizable as
// the trainer reads its data (TabFormer's CSV), for retraining on live outcomes.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { requireSchema } from "../../tasks/fraud/context";
import { TABFORMER_HEADER, tabFormerLine } from "../../tasks/fraud/outcomes/export";
import { KEY_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Payments per export at most (the window's oldest first). */
const MAX_ROWS = 10_000;

const Instant = z.iso.datetime({ offset: true }).optional();

const route = createRoute({
  method: "get",
  path: "/export",
  operationId: "exportFraudDecisions",
  summary: "Labelled decisions of a window as TabFormer CSV, the fraud trainer's input",
  request: {
    query: z.object({
      since: Instant.openapi({ description: "Default: 90 days before until" }),
      until: Instant.openapi({ description: "Default: now (exclusive)" }),
    }),
  },
  responses: {
    200: {
      description:
        "One row per decided payment, per card in time order; Is Fraud? from its outcomes " +
        `(at most ${MAX_ROWS} payments; the header X-Truncated says when there were more)`,
      content: { "text/csv": { schema: z.string() } },
    },
    ...problemResponses("openai", 400, KEY_ERRORS, 503),
  },
});

export const fraudExportRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(
  route,
  async (c) => {
    const query = c.req.valid("query");
    const until = query.until === undefined ? Date.now() : Date.parse(query.until);
    const since = query.since === undefined ? until - 90 * DAY_MS : Date.parse(query.since);
    if (!(since < until))
      throw new ServiceError(400, "invalid_request", "since must be before until", {
        field: "since",
      });
    const stores = c.var.fraudStores(c.env);
    await requireSchema(stores);
    const rows = await stores.backtestRows(
      new Date(since).toISOString(),
      new Date(until).toISOString(),
      MAX_ROWS + 1,
    );
    const lines = rows
      .slice(0, MAX_ROWS)
      .toSorted(
        (a, b) =>
          (a.cardId < b.cardId ? -1 : a.cardId > b.cardId ? 1 : 0) ||
          a.transactionAt.localeCompare(b.transactionAt),
      )
      .map(tabFormerLine);
    c.header("x-truncated", String(rows.length > MAX_ROWS));
    return c.body(`${[TABFORMER_HEADER, ...lines].join("\n")}\n`, 200, {
      "content-type": "text/csv; charset=utf-8",
    });
  },
);
