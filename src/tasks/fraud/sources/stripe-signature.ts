// Stripe-Signature verified by the stripe SDK on the raw body, with the 300 s tolerance
// applied both ways: the SDK refuses signatures older than the tolerance, this refuses ones
// dated further ahead (a replayable forgery would otherwise stay valid for years).
import type Stripe from "stripe";
import { z } from "zod";
import { ServiceError } from "../../../errors/service-error";
import { invalidRequest } from "../../../errors/invalid-request";

export const TOLERANCE_SECONDS = 300;

/**
 * The stripe SDK, evaluated on the first webhook rather than with the Worker's top level (its
 * 750 KB of modules would count against the start-up CPU limit), with its Web Crypto provider.
 */
let sdk:
  | Promise<{ Stripe: typeof Stripe; crypto: ReturnType<typeof Stripe.createSubtleCryptoProvider> }>
  | undefined;
const stripeSdk = () =>
  (sdk ??= import("stripe").then(({ default: loaded }) => ({
    Stripe: loaded,
    crypto: loaded.createSubtleCryptoProvider(),
  })));

/** The envelope every event must have; the SDK verifies the signature, not the shape. */
const EventSchema = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  api_version: z.string().nullish(),
  data: z.object({ object: z.unknown() }),
});
/** The event, its api_version the SDK's own where the event names none. */
export type StripeEvent = z.infer<typeof EventSchema> & { api_version: string };

const invalid = (detail: string, cause?: unknown) =>
  new ServiceError(400, "invalid_request", detail, { field: "headers.stripe-signature", cause });

/** The signed event, or 400 naming the header (503 when no secret is configured). */
export async function verifyStripe(
  body: string,
  signature: string | undefined,
  secret: string | undefined,
  now = Date.now(),
): Promise<StripeEvent> {
  if (!secret)
    throw new ServiceError(503, "not_configured", "STRIPE_WEBHOOK_SECRET is not configured");
  if (!signature) throw invalid("Missing Stripe-Signature header");
  let event: unknown;
  let apiVersion: string;
  try {
    const { Stripe, crypto } = await stripeSdk();
    apiVersion = Stripe.API_VERSION;
    event = await Stripe.webhooks.constructEventAsync(
      body,
      signature,
      secret,
      TOLERANCE_SECONDS,
      crypto,
    );
  } catch (error) {
    throw invalid("Stripe signature verification failed", error);
  }
  const timestamp = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
  if (!(timestamp * 1000 <= now + TOLERANCE_SECONDS * 1000)) {
    throw invalid(`Stripe signature timestamp is more than ${TOLERANCE_SECONDS} s in the future`);
  }
  const parsed = EventSchema.safeParse(event);
  // An event without api_version is answered with the SDK's own.
  if (parsed.success) return { ...parsed.data, api_version: parsed.data.api_version ?? apiVersion };
  throw invalidRequest(parsed.error, "body");
}
