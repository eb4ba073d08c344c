// POST /v1/webhooks/stripe: a signed Stripe event decided once per payment (or answered, for
// Issuing authorizations), or recorded as not scored, then acknowledged.
import { OpenAPIHono } from "@hono/zod-openapi";
import Stripe from "stripe";
import type { z } from "zod";
import { ServiceError } from "../../errors/service-error";
import { describe, type SourceEvent } from "../../tasks/fraud/sources/source-event";
import {
  ChargeSchema,
  fromCharge,
  fromIssuingAuthorization,
  fromPaymentIntent,
  IssuingAuthorizationSchema,
  PaymentIntentSchema,
} from "../../tasks/fraud/sources/stripe";
import { bodyText } from "../http/body";
import type { AppEnv } from "../http/services";
import { merchantOf, requireSchema } from "../../tasks/fraud/context";
import { record, type Recorded } from "../../tasks/fraud/record";
import { verifyStripe, type StripeEvent } from "../../tasks/fraud/sources/stripe-signature";
import {
  fromStripeDispute,
  fromStripeEarlyFraudWarning,
  type Outcome,
  StripeDisputeSchema,
  StripeEarlyFraudWarningSchema,
} from "../../tasks/fraud/outcomes/outcome";

/** Stripe waits 2 s for an authorization decision; leave room for the network. */
const AUTHORIZATION_DEADLINE_MS = 1500;
/** Stripe metadata values hold at most 500 characters. */
const METADATA_MAX = 500;

/** The event's object mapped by `map`, or the first field that kept it from being a payment. */
function sourceOf<T extends z.ZodType>(
  schema: T,
  event: StripeEvent,
  map: (value: z.infer<T>) => SourceEvent,
): SourceEvent {
  const parsed = schema.safeParse(event.data.object);
  if (parsed.success) return map(parsed.data);
  const object = event.data.object;
  const objectId =
    typeof object === "object" && object !== null && "id" in object && typeof object.id === "string"
      ? object.id
      : event.id;
  return { kind: "unscored", objectId, reason: `data.object.${describe(parsed.error)}` };
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ServiceError(504, "upstream_timeout", `No fraud decision within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** A dispute or early fraud warning as an outcome of its charge, or why it is not one. */
function outcomeOf(event: StripeEvent): Outcome | string {
  if (event.type === "charge.dispute.created") {
    const parsed = StripeDisputeSchema.safeParse(event.data.object);
    return parsed.success
      ? fromStripeDispute(event.id, parsed.data)
      : `data.object.${describe(parsed.error)}`;
  }
  const parsed = StripeEarlyFraudWarningSchema.safeParse(event.data.object);
  return parsed.success
    ? fromStripeEarlyFraudWarning(event.id, parsed.data)
    : `data.object.${describe(parsed.error)}`;
}

const acknowledged = (recorded: Recorded) =>
  recorded.scored
    ? { received: true, scored: true, duplicate: recorded.duplicate, decision: recorded.decision }
    : { received: true, scored: false, reason: recorded.reason };

/**
 * The signature is verified by the stripe SDK on the raw body (both ways within 300 s). Issuing
 * authorization requests are answered {approved} within Stripe's 2 s budget, by the model or, when
 * it cannot score, by ISSUING_UNSCORED_POLICY; charges and payment intents are decided once per
 * charge (an authorization's .created once per iauth_).
 */
export const stripeWebhook = new OpenAPIHono<AppEnv>();
stripeWebhook.post("/", async (c) => {
  const event = await verifyStripe(
    await bodyText(c.req.raw),
    c.req.header("stripe-signature"),
    c.env.STRIPE_WEBHOOK_SECRET,
  );
  const stores = c.var.fraudStores(c.env);
  await requireSchema(stores);
  const delivered = { eventId: event.id, provider: "stripe" as const, eventType: event.type };
  const deps = { services: c.get("services"), stores };

  switch (event.type) {
    case "issuing_authorization.request": {
      c.header("stripe-version", event.api_version ?? Stripe.API_VERSION);
      const policy = c.env.ISSUING_UNSCORED_POLICY === "approve";
      const source = sourceOf(IssuingAuthorizationSchema, event, fromIssuingAuthorization);
      const unscored = async (reason: string) => {
        const objectId = source.kind === "unscored" ? source.objectId : source.transaction.id;
        // Recorded before the answer; Stripe never retries an authorization request, so the
        // policy answers even if recording fails.
        await deps.stores
          .recordUnscored({
            ...delivered,
            objectId,
            transactionKey: source.key ?? null,
            reason,
            approved: policy,
          })
          .catch((error: unknown) =>
            console.error(
              JSON.stringify({
                event: "unscored_not_recorded",
                eventId: event.id,
                error: String(error),
              }),
            ),
          );
        return c.json({
          approved: policy,
          metadata: { fraud_unscored: reason.slice(0, METADATA_MAX) },
        });
      };
      if (source.kind === "unscored") return unscored(source.reason);
      const work = record(c.env, deps, delivered, source);
      // Past the deadline Stripe has moved on, but the decision still completes and is stored.
      c.executionCtx.waitUntil(work.catch(() => undefined));
      try {
        const recorded = await withDeadline(work, AUTHORIZATION_DEADLINE_MS);
        if (!recorded.scored) return unscored(recorded.reason);
        const { decision } = recorded;
        return c.json({
          approved: decision.approved,
          metadata: { fraud_score: decision.score.toFixed(4), fraud_label: decision.label },
        });
      } catch (error) {
        return unscored(
          error instanceof ServiceError ? error.message : "the fraud decision failed",
        );
      }
    }
    case "issuing_authorization.created": {
      const source = sourceOf(IssuingAuthorizationSchema, event, (authorization) =>
        fromIssuingAuthorization(authorization, true),
      );
      return c.json(acknowledged(await record(c.env, deps, delivered, source)));
    }
    case "charge.succeeded":
    case "charge.failed":
    case "charge.captured":
    case "charge.updated": {
      const source = sourceOf(ChargeSchema, event, (charge) =>
        fromCharge(charge, merchantOf(c.env)),
      );
      return c.json(acknowledged(await record(c.env, deps, delivered, source)));
    }
    case "payment_intent.succeeded":
    case "payment_intent.payment_failed": {
      const source = sourceOf(PaymentIntentSchema, event, (intent) =>
        fromPaymentIntent(intent, merchantOf(c.env)),
      );
      return c.json(acknowledged(await record(c.env, deps, delivered, source)));
    }
    case "charge.dispute.created":
    case "radar.early_fraud_warning.created": {
      const outcome = outcomeOf(event);
      if (typeof outcome === "string") {
        // Kept with the reason, as any signed event that cannot be read: never silently lost.
        await deps.stores.recordUnscored({
          ...delivered,
          objectId: event.id,
          transactionKey: null,
          reason: outcome,
          approved: null,
        });
        return c.json({ received: true, scored: false, reason: outcome });
      }
      const first = await deps.stores.recordOutcome(outcome);
      return c.json({ received: true, outcome, duplicate: !first });
    }
    default:
      return c.json({
        received: true,
        ignored: `event type ${event.type} carries no transaction to score`,
      });
  }
});
