// A fraud decision as the API shows it: in a card's view and in a webhook's acknowledgement.
import { z } from "@hono/zod-openapi";

export const ReasonSchema = z
  .object({
    code: z.string().openapi({ example: "amount_far_above_card_history" }),
    text: z.string(),
    contribution: z.number().openapi({
      description: "The feature group's share of score − baselineScore (positive: toward fraud)",
    }),
  })
  .openapi("FraudReason");

export const TriggeredRuleSchema = z
  .object({
    id: z.string(),
    version: z.number().int(),
    action: z.enum(["allow", "block", "review", "approve", "decline"]),
  })
  .openapi("FraudTriggeredRule");

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
  reasons: z.array(ReasonSchema).optional().openapi({
    description:
      "Up to 3 reasons, largest contribution first (decisions made before reasons have none)",
  }),
  baselineScore: z.number().optional().openapi({
    description: "The score with every feature group absent; all contributions sum to score − it",
  }),
  rulesTriggered: z.array(TriggeredRuleSchema).optional().openapi({
    description: "Every enabled rule that matched, in order (Adyen's triggeredTransactionRules)",
  }),
  ruleAction: z.enum(["allow", "block", "review", "approve", "decline"]).optional().openapi({
    description: "The deciding rule's action (the first match that is not review)",
  }),
  ruleInputs: z.record(z.string(), z.unknown()).optional().openapi({
    description: "What the rules read about this payment: transaction, card, score, label",
  }),
});
