// The webhooks in the OpenAPI document. They are plain routes (the signature is checked on the
// raw body before anything is parsed), so they are documented here rather than by createRoute.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { DecisionSchema } from "../fraud/decision-schema";
import { BODY_ERRORS, problemResponses } from "../http/problems";

const StripeAcknowledgement = z.union([
  z
    .object({
      approved: z.boolean(),
      metadata: z.union([
        z.object({ fraud_score: z.string(), fraud_label: z.string() }),
        z.object({ fraud_unscored: z.string() }),
      ]),
    })
    .openapi({
      description:
        "issuing_authorization.request: the decision Stripe applies (with a Stripe-Version header)",
    }),
  z.object({
    received: z.literal(true),
    scored: z.literal(true),
    duplicate: z.boolean(),
    decision: DecisionSchema,
  }),
  z.object({ received: z.literal(true), scored: z.literal(false), reason: z.string() }),
  z.object({ received: z.literal(true), ignored: z.string() }),
  z
    .object({
      received: z.literal(true),
      outcome: z.object({
        eventId: z.string(),
        provider: z.enum(["stripe", "adyen"]),
        transactionKey: z.string(),
        kind: z.enum(["dispute", "early_fraud_warning", "chargeback", "notification_of_fraud"]),
        fraudulent: z.boolean(),
        reason: z.string().nullable(),
        reportedAt: z.string(),
      }),
      duplicate: z.boolean(),
    })
    .openapi({
      description:
        "charge.dispute.created, radar.early_fraud_warning.created: the outcome stored as a " +
        "label of its charge (duplicate: this event was stored before)",
    }),
]);

const StripeEvent = z
  .object({
    id: z.string(),
    object: z.literal("event"),
    type: z.string(),
    api_version: z.string().nullable().optional(),
    created: z.number().int(),
    data: z.object({ object: z.object({}).loose() }),
  })
  .loose();

const AdyenNotification = z.object({
  live: z.enum(["true", "false"]),
  notificationItems: z
    .array(z.object({ NotificationRequestItem: z.object({}).loose() }))
    .min(1)
    .max(100),
});

export function documentWebhooks(registry: OpenAPIHono["openAPIRegistry"]): void {
  registry.registerPath({
    method: "post",
    path: "/stripe",
    operationId: "stripeWebhook",
    summary:
      "Stripe webhook: Issuing authorization requests decided, " +
      "charges and payment intents scored once per charge",
    security: [],
    request: {
      headers: z.object({
        "stripe-signature": z.string().openapi({
          description: "t=<unix seconds>,v1=<HMAC-SHA256>; within 300 s of now either way",
        }),
      }),
      body: { required: true, content: { "application/json": { schema: StripeEvent } } },
    },
    responses: {
      200: {
        description:
          "Acknowledged: decided, duplicate of a decided " +
          "payment, recorded as not scored, or ignored",
        content: { "application/json": { schema: StripeAcknowledgement } },
      },
      // 400 also: a missing or invalid Stripe-Signature (bad HMAC, older or newer than 300 s); 500:
      // storing the decision failed; 503: STRIPE_WEBHOOK_SECRET unset or a D1 migration missing
      // (Stripe retries both).
      ...problemResponses("problem", BODY_ERRORS, 500, 503),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/adyen",
    operationId: "adyenWebhook",
    summary:
      "Adyen standard notification: every item's HMAC verified, " +
      "AUTHORISATION items scored once per pspReference",
    security: [],
    request: {
      body: { required: true, content: { "application/json": { schema: AdyenNotification } } },
    },
    responses: {
      200: {
        description: "Accepted",
        content: { "text/plain": { schema: z.literal("[accepted]") } },
      },
      // 401: an item's hmacSignature does not verify; 500: storing a decision failed (Adyen
      // retries).
      ...problemResponses("problem", BODY_ERRORS, 401, 500, 503),
    },
  });
}
