// POST /v1/fraud/score: a batch of accounts, each with its recent history and the
// transaction to score, in one run of the fraud model. Stateless: nothing is recorded.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { TransactionSchema } from "../../tasks/fraud/transaction";
import { capability } from "../../tasks";
import { serverTiming } from "../http/server-timing";
import { BODY_ERRORS, MODEL_ERRORS, problemResponses, KEY_ERRORS } from "../http/problems";
import type { AppEnv } from "../http/services";
import { findModel, requireReady } from "../../tasks/model-lookup";
import { fraudCardRoutes } from "./cards";
import { fraudPerformanceRoutes } from "./performance";
import { fraudRuleRoutes } from "./rules";
import { fraudDriftRoutes } from "./drift";
import { fraudExportRoutes } from "./export";
import { ReasonSchema } from "./decision-schema";
import { PLAYERS } from "../../tasks/fraud/attribution";
import { reasonsFor } from "../../tasks/fraud/reasons";
import { recentHistory } from "../../tasks/fraud/windows";
import { validationHook } from "../http/validation";
import { requireApiKey, requireScope } from "../http/auth";
import { limitBody, requireJson } from "../http/body";

/** History entries accepted per account; the model reads only the latest window − 1. */
const MAX_HISTORY = 50;

const ScoreRequest = z
  .object({
    model: z.string().min(1).optional().openapi({ description: "Defaults to FRAUD_MODEL" }),
    accounts: z
      .array(
        z
          .object({
            history: z.array(TransactionSchema).max(MAX_HISTORY).default([]),
            transaction: TransactionSchema,
          })
          .strict(),
      )
      .min(1),
    explain: z
      .boolean()
      .default(false)
      .openapi({
        description:
          "Also give each score's reason codes and its attribution over the model's feature " +
          "groups (one model run per account instead of one per request)",
      }),
  })
  .strict()
  .openapi("FraudScoreRequest");

const ScoreResponse = z
  .object({
    model: z.string(),
    model_version: z.string(),
    results: z.array(
      z.object({
        transaction_id: z.string(),
        card_id: z.string(),
        score: z.number(),
        label: z.enum(["LEGIT", "SUSPECT", "FRAUD"]),
        history_used: z.number().int(),
        reasons: z.array(ReasonSchema).optional(),
        contributions: z
          .record(z.enum(PLAYERS), z.number())
          .optional()
          .openapi({
            description:
              "With explain: every feature group's contribution; they sum to score − " +
              "baseline_score within 1e-6",
          }),
        baseline_score: z.number().optional(),
      }),
    ),
  })
  .openapi("FraudScoreResponse");

const route = createRoute({
  method: "post",
  path: "/score",
  operationId: "scoreFraud",
  summary: "Score card transactions for fraud, each in the context of its card's recent history",
  request: { body: { required: true, content: { "application/json": { schema: ScoreRequest } } } },
  responses: {
    200: {
      description: "Score and label per transaction",
      content: { "application/json": { schema: ScoreResponse } },
    },
    ...problemResponses("openai", KEY_ERRORS, BODY_ERRORS, MODEL_ERRORS),
  },
});

export const fraudRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
fraudRoutes.use(requireApiKey);
fraudRoutes.use("/score", requireScope("fraud:score"));
fraudRoutes.use("/cards/*", requireScope("fraud:read"));
fraudRoutes.use("/performance", requireScope("fraud:read"));
fraudRoutes.use("/drift", requireScope("fraud:read"));
// The export is every decided payment of a window with its features: an operator's (admin).
fraudRoutes.use("/export", requireScope("admin"));
// Reading the rules and backtesting a draft change nothing; changing a rule changes decisions.
fraudRoutes.get("/rules", requireScope("fraud:read"));
fraudRoutes.post("/rules/backtest", requireScope("fraud:read"));
fraudRoutes.put("/rules/:id", requireScope("admin"));
fraudRoutes.on(["POST", "PUT"], "*", requireJson, limitBody);
fraudRoutes.openapi(route, async (c) => {
  const body = c.req.valid("json");
  const model = findModel(c.get("services"), body.model ?? c.env.FRAUD_MODEL, "model");
  const scorer = capability(model, "fraudScoring", "model");
  const maxBatch = Number(c.env.MAX_BATCH);
  if (body.accounts.length > maxBatch) {
    throw new ServiceError(
      422,
      "unprocessable_input",
      `At most ${maxBatch} accounts per request, got ${body.accounts.length}`,
      { field: "accounts" },
    );
  }
  body.accounts.forEach((account, i) => {
    const other = account.history.findIndex(
      (entry) => entry.card_id !== account.transaction.card_id,
    );
    if (other !== -1) {
      throw new ServiceError(
        422,
        "unprocessable_input",
        "Every history entry must be of the transaction's card",
        {
          field: `accounts.${i}.history.${other}.card_id`,
        },
      );
    }
  });
  await requireReady(model);
  const accounts = body.accounts.map((account) => ({
    history: account.history,
    current: account.transaction,
  }));
  if (body.explain) {
    // Explained together: the scorer runs the accounts of one turn as one batch.
    const explanations = await Promise.all(
      accounts.map((account) => scorer.explain(account, c.req.raw.signal)),
    );
    const explained = accounts.map((account, i) => {
      const result = explanations[i]!;
      return {
        transaction_id: account.current.id,
        card_id: account.current.card_id,
        score: result.score,
        label: result.label,
        history_used: result.historyUsed,
        reasons: reasonsFor(
          result,
          account.current,
          recentHistory(account.history, account.current, scorer.manifest.window - 1),
        ),
        contributions: result.contributions,
        baseline_score: result.baseline,
      };
    });
    const { name, version } = scorer.manifest;
    return c.json({ model: name, model_version: version, results: explained }, 200);
  }
  const { results, timings } = await scorer.score(accounts, c.req.raw.signal);
  c.header("server-timing", serverTiming(timings));
  return c.json(
    {
      model: scorer.manifest.name,
      model_version: scorer.manifest.version,
      results: results.map((result, i) => ({
        transaction_id: body.accounts[i]!.transaction.id,
        card_id: body.accounts[i]!.transaction.card_id,
        score: result.score,
        label: result.label,
        history_used: result.historyUsed,
      })),
    },
    200,
  );
});

// GET /v1/fraud/cards/{card} (cards.ts) and /v1/fraud/performance, mounted with the scoring route.
fraudRoutes.route("/cards", fraudCardRoutes);
fraudRoutes.route("/", fraudPerformanceRoutes);
fraudRoutes.route("/", fraudRuleRoutes);
fraudRoutes.route("/", fraudDriftRoutes);
fraudRoutes.route("/", fraudExportRoutes);
