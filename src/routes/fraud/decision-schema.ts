// A fraud decision as the API shows it: in a card's view and in a webhook's acknowledgement.
import { z } from "@hono/zod-openapi";

export const DecisionSchema = z.object({
  transactionKey: z.string(),
  eventId: z.string(),
  provider: z.enum(["stripe", "adyen", "api"]),
  eventType: z.string(),
  transactionId: z.string(),
  cardId: z.string(),
  score: z.number(),
  label: z.enum(["LEGIT", "SUSPECT", "FRAUD"]),
  approved: z.boolean(),
  decidedBy: z.enum(["model", "provider"]),
  model: z.string(),
  modelVersion: z.string(),
  historyLength: z.number().int(),
  transactionAt: z.string(),
  decidedAt: z.string(),
});
