// POST /v1/webhooks/stripe: signature verified by the stripe SDK on the raw body; Issuing
// authorization requests answered {approved} within Stripe's 2 s budget; charges and
// payment intents scored and recorded. Unknown event types are acknowledged, not stored.
import { Hono } from "hono";
import Stripe from "stripe";
import { z } from "zod";
import { ServiceError } from "../../errors/service-error";
import { decide } from "../../tasks/fraud/decide";
import { ChargeSchema, fromCharge, fromIssuingAuthorization, IssuingAuthorizationSchema } from "../../tasks/fraud/sources/stripe";
import { TransactionSchema, fromMinorUnits } from "../../tasks/fraud/transaction";
import type { AppEnv } from "../services";
import { parseBody } from "../validation";
import { fraudContext, type FraudContext } from "./fraud-context";

const TOLERANCE_SECONDS = 300;
/** Stripe waits 2 s for an authorization decision; leave room for the network. */
const AUTHORIZATION_DEADLINE_MS = 1500;

const cryptoProvider = Stripe.createSubtleCryptoProvider();

const PaymentIntentSchema = z.object({
  id: z.string().min(1),
  created: z.number().int().positive(),
  amount: z.number().int().nonnegative(),
  currency: z.string().length(3),
  payment_method: z.string().min(1),
});

/** The envelope every event must have; the SDK verifies the signature, not the shape. */
const EventSchema = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  api_version: z.string().nullish(),
  data: z.object({ object: z.unknown() }),
});
type StripeEvent = z.infer<typeof EventSchema>;

async function verify(body: string, signature: string | undefined, secret: string | undefined): Promise<StripeEvent> {
  if (!secret) throw new ServiceError(503, "not_configured", "STRIPE_WEBHOOK_SECRET is not configured");
  if (!signature) throw new ServiceError(400, "invalid_request", "Missing Stripe-Signature header", { field: "headers.stripe-signature" });
  let event: unknown;
  try {
    event = await Stripe.webhooks.constructEventAsync(body, signature, secret, TOLERANCE_SECONDS, cryptoProvider);
  } catch (error) {
    throw new ServiceError(400, "invalid_request", "Stripe signature verification failed", { field: "headers.stripe-signature", cause: error });
  }
  return parseBody(EventSchema, event);
}

/** Validates the event's object, naming the failing field under data.object. */
function parseObject<T extends z.ZodType>(schema: T, event: StripeEvent): z.infer<T> {
  const result = schema.safeParse(event.data.object);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = ["data", "object", ...(issue?.path.map(String) ?? [])].join(".");
  throw new ServiceError(400, "invalid_request", `${field}: ${issue?.message ?? "invalid"}`, { field });
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ServiceError(504, "upstream_timeout", `No fraud decision within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

export const stripeWebhook = new Hono<AppEnv>().post("/v1/webhooks/stripe", async (c) => {
  const event = await verify(await c.req.text(), c.req.header("stripe-signature"), c.env.STRIPE_WEBHOOK_SECRET);
  const context = (): Promise<FraudContext> => fraudContext(c.env, c.get("services"));
  const record = async (transaction: z.infer<typeof TransactionSchema>) => {
    const { scorer, decisions, histories } = await context();
    return decide(scorer, decisions, histories, { eventId: event.id, provider: "stripe", eventType: event.type, transaction });
  };

  switch (event.type) {
    case "issuing_authorization.request": {
      const transaction = fromIssuingAuthorization(parseObject(IssuingAuthorizationSchema, event));
      const work = record(transaction);
      // Past the deadline Stripe has moved on, but the decision still completes and is stored.
      c.executionCtx.waitUntil(work.catch(() => undefined));
      const { decision } = await withDeadline(work, AUTHORIZATION_DEADLINE_MS);
      c.header("stripe-version", event.api_version ?? Stripe.API_VERSION);
      return c.json({ approved: decision.approved, metadata: { fraud_score: decision.score.toFixed(4), fraud_label: decision.label } });
    }
    case "charge.succeeded":
    case "charge.failed":
    case "charge.captured": {
      const { merchant } = await context();
      const transaction = fromCharge(parseObject(ChargeSchema, event), merchant);
      if (transaction === undefined) return c.json({ received: true, ignored: "not a card payment" });
      const { decision, duplicate } = await record(transaction);
      return c.json({ received: true, duplicate, decision });
    }
    case "payment_intent.succeeded":
    case "payment_intent.payment_failed": {
      const intent = parseObject(PaymentIntentSchema, event);
      const { merchant } = await context();
      const transaction = TransactionSchema.parse({
        id: intent.id,
        card_id: `payment_method:${intent.payment_method}`,
        timestamp: intent.created,
        amount: fromMinorUnits(intent.amount, intent.currency),
        currency: intent.currency,
        method: "online",
        merchant,
      });
      const { decision, duplicate } = await record(transaction);
      return c.json({ received: true, duplicate, decision });
    }
    default:
      return c.json({ received: true, ignored: `event type ${event.type} carries no transaction to score` });
  }
});
