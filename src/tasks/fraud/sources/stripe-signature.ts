// Stripe-Signature verified by the stripe SDK on the raw body, with the 300 s tolerance
// applied both ways: the SDK refuses signatures older than the tolerance, this refuses ones
// dated further ahead (a replayable forgery would otherwise stay valid for years).
import Stripe from "stripe";
import { z } from "zod";
import { ServiceError } from "../../../errors/service-error";
import { invalidRequest } from "../../../errors/invalid-request";
import { keep } from "../../../memos";
import { toHex } from "../../../protocols/hex";
import { hmacKeys } from "./hmac-keys";

export const TOLERANCE_SECONDS = 300;

const encoder = new TextEncoder();
const keys = hmacKeys((secret) => encoder.encode(secret));
keep("fraud.stripe-keys", keys, { entries: keys.entries, clear: keys.clear });

/** How many Stripe secrets this isolate has imported (tests hold it to one per secret). */
export const stripeKeyImports = () => keys.imports();

/**
 * The SDK's crypto, with the key imported once per secret: its own SubtleCryptoProvider imports
 * the secret for every event (a CryptoKey and its buffers, garbage the isolate's full collection
 * then sweeps, docs/fraud.md "Latency"). The SDK still parses the header, compares the
 * signatures in constant time and applies the tolerance.
 */
class KeyedSubtleCryptoProvider extends Stripe.CryptoProvider {
  override computeHMACSignature(): string {
    throw new Error("Stripe signatures are verified asynchronously here");
  }

  override async computeHMACSignatureAsync(payload: string, secret: string): Promise<string> {
    const key = await keys.key(secret);
    // Unreachable: a secret's UTF-8 bytes are always a key.
    if (key === undefined) throw new Error("the webhook secret is not an HMAC key");
    return toHex(await crypto.subtle.sign("HMAC", key, encoder.encode(payload)));
  }

  override async computeSHA256Async(data: Uint8Array): Promise<Uint8Array> {
    return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  }
}

/** Exported for tests: the SDK's sample values (stripe's crypto/CryptoProvider.d.ts). */
export const cryptoProvider = new KeyedSubtleCryptoProvider();

/** The envelope every event must have; the SDK verifies the signature, not the shape. */
const EventSchema = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  api_version: z.string().nullish(),
  data: z.object({ object: z.unknown() }),
});
export type StripeEvent = z.infer<typeof EventSchema>;

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
  try {
    event = await Stripe.webhooks.constructEventAsync(
      body,
      signature,
      secret,
      TOLERANCE_SECONDS,
      cryptoProvider,
    );
  } catch (error) {
    throw invalid("Stripe signature verification failed", error);
  }
  const timestamp = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
  if (!(timestamp * 1000 <= now + TOLERANCE_SECONDS * 1000)) {
    throw invalid(`Stripe signature timestamp is more than ${TOLERANCE_SECONDS} s in the future`);
  }
  const parsed = EventSchema.safeParse(event);
  if (parsed.success) return parsed.data;
  throw invalidRequest(parsed.error, "body");
}
