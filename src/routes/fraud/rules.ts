// The fraud rules' admin API: GET /v1/fraud/rules, PUT /v1/fraud/rules/{id} (a new version),
// POST /v1/fraud/rules/backtest (a draft over the stored decisions of a window, with outcomes).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { requireSchema } from "../../tasks/fraud/context";
import { compileRule, MAX_EXPRESSION } from "../../tasks/fraud/rules/rule-language";
import { RULE_ACTIONS } from "../../tasks/fraud/rules/rules";
import { BODY_ERRORS, KEY_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Decisions a backtest reads at most (oldest first in its window). */
const MAX_BACKTEST = 10_000;

const Expression = z.string().min(1).max(MAX_EXPRESSION).openapi({
  description: "A CEL condition over transaction, card, score, label and provider",
  example: 'transaction.amount > 2000.0 && card.new_merchant && transaction.method == "online"',
});

const RuleSchema = z
  .object({
    id: z.string(),
    version: z.number().int(),
    expression: z.string(),
    action: z.enum(RULE_ACTIONS),
    order: z.number().int(),
    enabled: z.boolean(),
    description: z.string(),
  })
  .openapi("FraudRule");

const RuleBody = z
  .object({
    expression: Expression,
    action: z.enum(RULE_ACTIONS).openapi({
      description: "allow, block, review; for Stripe Issuing also approve, decline",
    }),
    order: z.number().int().min(0).max(1_000_000).default(100),
    enabled: z.boolean().default(true),
    description: z.string().max(500).default(""),
  })
  .strict()
  .openapi("FraudRuleBody");

const Instant = z.iso.datetime({ offset: true }).optional();

const BacktestBody = z
  .object({
    expression: Expression,
    since: Instant.openapi({ description: "Default: 30 days before until" }),
    until: Instant.openapi({ description: "Default: now (exclusive)" }),
  })
  .strict()
  .openapi("FraudBacktestRequest");

const ByLabel = z.object({
  LEGIT: z.number().int(),
  SUSPECT: z.number().int(),
  FRAUD: z.number().int(),
});

const BacktestResponse = z
  .object({
    since: z.string(),
    until: z.string(),
    evaluated: z.number().int().openapi({ description: "Stored decisions read" }),
    truncated: z.boolean().openapi({ description: `More than ${MAX_BACKTEST} in the window` }),
    hits: z.number().int(),
    hits_by_label: ByLabel,
    hits_labelled: z.number().int().openapi({ description: "Hits whose payment has an outcome" }),
    hits_fraudulent: z.number().int().openapi({ description: "Hits an outcome called fraud" }),
    fraudulent_missed: z
      .number()
      .int()
      .openapi({ description: "Fraudulent payments of the window the rule would not hit" }),
  })
  .openapi("FraudBacktest");

const id = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "lowercase letters, digits, - and _ (up to 64)")
  .openapi({ example: "block-big-prepaid-new-merchant" });

const listRoute = createRoute({
  method: "get",
  path: "/rules",
  operationId: "fraudRules",
  summary: "The fraud rules (each one's current version), in order",
  responses: {
    200: {
      description: "The rules",
      content: { "application/json": { schema: z.object({ rules: z.array(RuleSchema) }) } },
    },
    ...problemResponses("openai", KEY_ERRORS, 503),
  },
});

const putRoute = createRoute({
  method: "put",
  path: "/rules/{id}",
  operationId: "putFraudRule",
  summary: "Create a fraud rule or store its next version",
  request: {
    params: z.object({ id }),
    body: { required: true, content: { "application/json": { schema: RuleBody } } },
  },
  responses: {
    200: {
      description: "The rule as stored, with its version",
      content: { "application/json": { schema: RuleSchema } },
    },
    ...problemResponses("openai", 400, KEY_ERRORS, BODY_ERRORS, 503),
  },
});

const backtestRoute = createRoute({
  method: "post",
  path: "/rules/backtest",
  operationId: "backtestFraudRule",
  summary: "Run a draft rule over the stored decisions of a window, with their outcomes",
  request: {
    body: { required: true, content: { "application/json": { schema: BacktestBody } } },
  },
  responses: {
    200: {
      description: "How many decisions the rule would have hit, and what they turned out to be",
      content: { "application/json": { schema: BacktestResponse } },
    },
    ...problemResponses("openai", 400, KEY_ERRORS, BODY_ERRORS, 503),
  },
});

export const fraudRuleRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listRoute, async (c) => {
    const stores = c.var.fraudStores(c.env);
    await requireSchema(stores);
    return c.json({ rules: await stores.currentRules() }, 200);
  })
  .openapi(putRoute, async (c) => {
    const { id: ruleId } = c.req.valid("param");
    const body = c.req.valid("json");
    compileRule(body.expression);
    const stores = c.var.fraudStores(c.env);
    await requireSchema(stores);
    return c.json(await stores.putRule({ id: ruleId, ...body }), 200);
  })
  .openapi(backtestRoute, async (c) => {
    const body = c.req.valid("json");
    const matches = compileRule(body.expression);
    const until = body.until === undefined ? Date.now() : Date.parse(body.until);
    const since = body.since === undefined ? until - 30 * DAY_MS : Date.parse(body.since);
    if (!(since < until))
      throw new ServiceError(400, "invalid_request", "since must be before until", {
        field: "since",
      });
    const stores = c.var.fraudStores(c.env);
    await requireSchema(stores);
    const window = { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
    const rows = await stores.backtestRows(window.since, window.until, MAX_BACKTEST + 1);
    const read = rows.slice(0, MAX_BACKTEST);
    const result = {
      ...window,
      evaluated: read.length,
      truncated: rows.length > MAX_BACKTEST,
      hits: 0,
      hits_by_label: { LEGIT: 0, SUSPECT: 0, FRAUD: 0 },
      hits_labelled: 0,
      hits_fraudulent: 0,
      fraudulent_missed: 0,
    };
    for (const row of read) {
      let hit = false;
      try {
        hit = matches(row.inputs);
      } catch {
        hit = false;
      }
      if (!hit) {
        if (row.fraudulent === 1) result.fraudulent_missed++;
        continue;
      }
      result.hits++;
      if (row.label === "LEGIT" || row.label === "SUSPECT" || row.label === "FRAUD")
        result.hits_by_label[row.label]++;
      if (row.fraudulent !== null) result.hits_labelled++;
      if (row.fraudulent === 1) result.hits_fraudulent++;
    }
    return c.json(result, 200);
  });
