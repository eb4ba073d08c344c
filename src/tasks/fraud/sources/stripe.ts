// Stripe events that carry a card payment, mapped onto the fraud task's Transaction and keyed
// on the payment (charge ch_…, Issuing authorization iauth_…), however many events describe it.
// Only the fields used are validated; amounts are in Stripe's minor units (stripe-currencies.ts).
import { z } from "zod";
import type { TransactionInput } from "../transaction";
import { toMajorUnits } from "./minor-units";
import { toTransaction, type SourceEvent } from "./source-event";
import { STRIPE_EXPONENTS } from "./stripe-currencies";

const Check = z.string().nullish();

/** Stripe's verification results in TabFormer's error vocabulary. */
function errorsFrom(checks: {
  cvc?: string | null;
  expiry?: string | null;
  postal?: string | null;
  pin?: string | null;
}): string[] {
  const errors: string[] = [];
  if (checks.expiry === "mismatch") errors.push("Bad Expiration");
  if (checks.cvc === "mismatch" || checks.cvc === "fail") errors.push("Bad CVV");
  if (checks.postal === "mismatch" || checks.postal === "fail") errors.push("Bad Zipcode");
  if (checks.pin === "mismatch") errors.push("Bad PIN");
  return errors;
}

/** Stripe decline codes (https://docs.stripe.com/declines/codes) in the same vocabulary. */
const FAILURE_ERRORS: Readonly<Record<string, string>> = {
  incorrect_cvc: "Bad CVV",
  invalid_cvc: "Bad CVV",
  expired_card: "Bad Expiration",
  invalid_expiry_month: "Bad Expiration",
  invalid_expiry_year: "Bad Expiration",
  incorrect_number: "Bad Card Number",
  invalid_number: "Bad Card Number",
  insufficient_funds: "Insufficient Balance",
  incorrect_pin: "Bad PIN",
  invalid_pin: "Bad PIN",
  offline_pin_required: "Bad PIN",
  incorrect_zip: "Bad Zipcode",
  processing_error: "Technical Glitch",
  issuer_not_available: "Technical Glitch",
};

const toMajor = (amount: number, currency: string) =>
  toMajorUnits(STRIPE_EXPONENTS, amount, currency);

export const IssuingAuthorizationSchema = z.object({
  id: z.string().min(1),
  created: z.number().int().positive(),
  amount: z.number().int().nonnegative(),
  currency: z.string().length(3),
  authorization_method: z.enum(["chip", "contactless", "keyed_in", "online", "swipe"]),
  /** Stripe's final outcome, on issuing_authorization.created / updated. */
  approved: z.boolean().nullish(),
  card: z.object({ id: z.string().min(1) }),
  pending_request: z
    .object({ amount: z.number().int().nonnegative(), currency: z.string().length(3) })
    .nullish(),
  merchant_data: z.object({
    category_code: z.string(),
    city: z.string().nullish(),
    state: z.string().nullish(),
    postal_code: z.string().nullish(),
    country: z.string().nullish(),
    name: z.string().nullish(),
    network_id: z.string().min(1),
  }),
  verification_data: z
    .object({
      cvc_check: Check,
      expiry_check: Check,
      address_postal_code_check: Check,
      pin_check: Check.optional(),
    })
    .partial()
    .nullish(),
});
export type IssuingAuthorization = z.infer<typeof IssuingAuthorizationSchema>;

/**
 * An Issuing authorization as a transaction at the card's merchant, keyed on its iauth_. On a
 * request we decide it; on issuing_authorization.created (`decided`) Stripe already has, and
 * its outcome is recorded unless the request was decided here first.
 */
export function fromIssuingAuthorization(
  authorization: IssuingAuthorization,
  decided = false,
): SourceEvent {
  const { merchant_data: merchant, verification_data: checks } = authorization;
  // At request time the amount to approve is in pending_request; `amount` is still 0.
  const amount = authorization.pending_request ?? authorization;
  const zip = merchant.postal_code?.match(/^\d{5}/)?.[0];
  const input: TransactionInput = {
    id: authorization.id,
    card_id: authorization.card.id,
    timestamp: authorization.created,
    amount: toMajor(amount.amount, amount.currency),
    currency: amount.currency,
    method: authorization.authorization_method,
    merchant: {
      id: merchant.network_id,
      ...(merchant.name ? { name: merchant.name } : {}),
      ...(merchant.city ? { city: merchant.city } : {}),
      // TabFormer names US states by code and foreign merchants by country.
      ...(merchant.country && merchant.country !== "US"
        ? { state: merchant.country }
        : merchant.state
          ? { state: merchant.state }
          : {}),
      ...(zip ? { zip } : {}),
      mcc: merchant.category_code,
    },
    errors: errorsFrom({
      cvc: checks?.cvc_check,
      expiry: checks?.expiry_check,
      postal: checks?.address_postal_code_check,
      pin: checks?.pin_check,
    }),
  };
  const providerApproved =
    decided && typeof authorization.approved === "boolean" ? authorization.approved : undefined;
  return toTransaction(`stripe:${authorization.id}`, input, authorization.id, providerApproved);
}

/** What identifies a card in a charge's payment method details (card and card_present alike). */
const CardIdentity = z.object({
  fingerprint: z.string().nullish(),
  brand: z.string().nullish(),
  last4: z.string().nullish(),
  exp_month: z.number().nullish(),
  exp_year: z.number().nullish(),
});

export const ChargeSchema = z.object({
  id: z.string().min(1),
  created: z.number().int().positive(),
  amount: z.number().int().nonnegative(),
  currency: z.string().length(3),
  status: z.string().nullish(),
  failure_code: z.string().nullish(),
  payment_method_details: z
    .object({
      card: CardIdentity.extend({
        checks: z
          .object({ cvc_check: Check, address_postal_code_check: Check })
          .partial()
          .nullish(),
      }).nullish(),
      card_present: CardIdentity.extend({ read_method: z.string().nullish() }).nullish(),
    })
    .nullish(),
});
export type Charge = z.infer<typeof ChargeSchema>;

export interface MerchantProfile {
  id: string;
  mcc: string;
  city?: string;
  state?: string;
  zip?: string;
}

type CardDetails = {
  fingerprint?: string | null;
  brand?: string | null;
  last4?: string | null;
  exp_month?: number | null;
  exp_year?: number | null;
};

/**
 * The card's identity: Stripe's fingerprint (one per card number) where present; otherwise
 * brand + last four + expiry, which distinct cards can share (about 1 in 10,000 cards of a
 * brand expiring the same month), merging their histories. Undefined when neither is there.
 */
export function stripeCardId(card: CardDetails): string | undefined {
  if (card.fingerprint) return `fingerprint:${card.fingerprint}`;
  if (!card.last4 || !card.exp_month || !card.exp_year) return undefined;
  return `stripe:card:${card.brand ?? ""}:${card.last4}:${card.exp_month}/${card.exp_year}`;
}

/** A charge on our own account, as Stripe decided it: the merchant is us. */
export function fromCharge(charge: Charge, merchant: MerchantProfile): SourceEvent {
  const key = `stripe:${charge.id}`;
  const card = charge.payment_method_details?.card ?? undefined;
  const present = charge.payment_method_details?.card_present ?? undefined;
  const details = card ?? present;
  if (details === undefined)
    return {
      kind: "unscored",
      key,
      objectId: charge.id,
      reason: "not a card payment (no payment_method_details.card or card_present)",
    };
  const cardId = stripeCardId(details);
  if (cardId === undefined)
    return {
      kind: "unscored",
      key,
      objectId: charge.id,
      reason: "no card identity: neither fingerprint nor last4 + expiry",
    };
  const method =
    present === undefined
      ? "online"
      : present.read_method === "magnetic_stripe_track2"
        ? "swipe"
        : present.read_method === "contactless_emv"
          ? "contactless"
          : "chip";
  const failure = charge.failure_code ? FAILURE_ERRORS[charge.failure_code] : undefined;
  const checks = errorsFrom({
    cvc: card?.checks?.cvc_check,
    postal: card?.checks?.address_postal_code_check,
  });
  return toTransaction(
    key,
    {
      id: charge.id,
      card_id: cardId,
      timestamp: charge.created,
      amount: toMajor(charge.amount, charge.currency),
      currency: charge.currency,
      method,
      merchant,
      errors: failure === undefined || checks.includes(failure) ? checks : [...checks, failure],
    },
    charge.id,
    charge.status !== "failed",
  );
}

export const PaymentIntentSchema = z.object({
  id: z.string().min(1),
  latest_charge: z.union([z.string(), z.object({ id: z.string() }).loose()]).nullish(),
  /** Embedded charges (API versions before 2022-11-15). */
  charges: z.object({ data: z.array(z.unknown()) }).nullish(),
});

/**
 * A PaymentIntent carries no card data on current API versions (`payment_method: null` in
 * Stripe's own examples): its charge is the payment. An embedded charge (older API versions)
 * is scored as that charge; otherwise the event is recorded against its latest charge.
 */
export function fromPaymentIntent(
  intent: z.infer<typeof PaymentIntentSchema>,
  merchant: MerchantProfile,
): SourceEvent {
  const embedded = intent.charges?.data.at(-1);
  const charge = embedded === undefined ? undefined : ChargeSchema.safeParse(embedded);
  if (charge?.success) return fromCharge(charge.data, merchant);
  const latest =
    typeof intent.latest_charge === "string" ? intent.latest_charge : intent.latest_charge?.id;
  if (latest === undefined)
    return {
      kind: "unscored",
      objectId: intent.id,
      reason: "a PaymentIntent without a charge carries no card data",
    };
  return {
    kind: "unscored",
    objectId: intent.id,
    key: `stripe:${latest}`,
    reason:
      "a PaymentIntent carries no card data; its charge " +
      `${latest} is scored from the charge.* events`,
  };
}
