// GET /v1/fraud/cards/{card}: a card's stored history, decisions and the deliveries that
// reached them, read from its Durable Object (disputes, and checking the service).
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { authorizationMethods } from "../../tasks/fraud/transaction";
import { problemResponses, KEY_ERRORS } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";
import { DecisionSchema } from "./decision-schema";

const StoredTransaction = z.object({
  id: z.string(),
  card_id: z.string(),
  timestamp: z.string().openapi({ description: "ISO 8601 (UTC)" }),
  amount: z.number(),
  currency: z.string(),
  method: z.enum(authorizationMethods),
  merchant: z.object({
    id: z.string(),
    name: z.string().optional(),
    city: z.string().optional(),
    state: z.string().optional(),
    zip: z.string().optional(),
    mcc: z.string(),
  }),
  errors: z.array(z.string()),
});

const CardResponse = z
  .object({
    card_id: z.string(),
    history: z.array(StoredTransaction).openapi({
      description: "The latest transactions kept for scoring (up to 64), oldest first",
    }),
    decisions: z
      .array(DecisionSchema)
      .openapi({ description: "One per payment, by transaction time" }),
    events: z.array(
      z.object({
        eventId: z.string(),
        transactionKey: z.string(),
        provider: z.enum(["stripe", "adyen", "api"]),
        eventType: z.string(),
        receivedAt: z.string(),
      }),
    ),
  })
  .openapi("FraudCard");

const route = createRoute({
  method: "get",
  path: "/{card}",
  operationId: "fraudCard",
  summary: "A card's stored transaction history and fraud decisions",
  request: {
    params: z.object({
      card: z
        .string()
        .min(1)
        .max(255)
        .openapi({
          description:
            "The card id as stored (e.g. fingerprint:…, an " +
            "Issuing ic_…, adyen:<alias>); URL-encode it",
          example: "fingerprint:AOB934RVNwzk6xtn",
        }),
    }),
  },
  responses: {
    200: {
      description: "The card's history and decisions",
      content: { "application/json": { schema: CardResponse } },
    },
    // 400: the card id is empty or over 255 characters; 404: nothing is stored for this card.
    ...problemResponses("openai", 400, KEY_ERRORS, 404),
  },
});

export const fraudCardRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(
  route,
  async (c) => {
    const { card } = c.req.valid("param");
    const view = await c.var.fraudStores(c.env).ledger.view(card);
    if (view.history.length === 0 && view.decisions.length === 0) {
      throw new ServiceError(404, "not_found", `Nothing is stored for card "${card}"`, {
        field: "card",
      });
    }
    const history = view.history.map((transaction) => ({
      ...transaction,
      timestamp: new Date(transaction.timestamp).toISOString(),
    }));
    return c.json({ card_id: card, history, decisions: view.decisions, events: view.events }, 200);
  },
);
