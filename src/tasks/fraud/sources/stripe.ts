// Stripe events that carry a card transaction, mapped onto the fraud task's Transaction.
// Only the fields used are validated; amounts arrive in minor units and are converted here.
import { z } from "zod";
import { fromMinorUnits, TransactionSchema, type Transaction, type TransactionInput } from "../transaction";

const Check = z.enum(["match", "mismatch", "not_provided", "unavailable", "pass", "fail", "unchecked"]).nullish();

/** Stripe's verification results in TabFormer's error vocabulary. */
function errorsFrom(checks: { cvc?: string | null; expiry?: string | null; postal?: string | null; pin?: string | null }): string[] {
  const errors: string[] = [];
  if (checks.expiry === "mismatch") errors.push("Bad Expiration");
  if (checks.cvc === "mismatch" || checks.cvc === "fail") errors.push("Bad CVV");
  if (checks.postal === "mismatch" || checks.postal === "fail") errors.push("Bad Zipcode");
  if (checks.pin === "mismatch") errors.push("Bad PIN");
  return errors;
}

export const IssuingAuthorizationSchema = z.object({
  id: z.string().min(1),
  created: z.number().int().positive(),
  amount: z.number().int().nonnegative(),
  currency: z.string().length(3),
  authorization_method: z.enum(["chip", "contactless", "keyed_in", "online", "swipe"]),
  card: z.object({ id: z.string().min(1) }),
  pending_request: z.object({ amount: z.number().int().nonnegative(), currency: z.string().length(3) }).nullish(),
  merchant_data: z.object({
    category_code: z.string().regex(/^\d{4}$/),
    city: z.string().nullish(),
    state: z.string().nullish(),
    postal_code: z.string().nullish(),
    country: z.string().nullish(),
    name: z.string().nullish(),
    network_id: z.string().min(1),
  }),
  verification_data: z
    .object({ cvc_check: Check, expiry_check: Check, address_postal_code_check: Check, pin_check: Check.optional() })
    .partial()
    .nullish(),
});

/** An Issuing authorization (request or created) as a transaction at the card's merchant. */
export function fromIssuingAuthorization(authorization: z.infer<typeof IssuingAuthorizationSchema>): Transaction {
  const { merchant_data: merchant, verification_data: checks } = authorization;
  // At request time the amount to approve is in pending_request; `amount` is still 0.
  const amount = authorization.pending_request ?? authorization;
  const zip = merchant.postal_code?.match(/^\d{5}/)?.[0];
  const input: TransactionInput = {
    id: authorization.id,
    card_id: authorization.card.id,
    timestamp: authorization.created,
    amount: fromMinorUnits(amount.amount, amount.currency),
    currency: amount.currency,
    method: authorization.authorization_method,
    merchant: {
      id: merchant.network_id,
      ...(merchant.name ? { name: merchant.name } : {}),
      ...(merchant.city ? { city: merchant.city } : {}),
      // TabFormer names US states by code and foreign merchants by country.
      ...(merchant.country && merchant.country !== "US" ? { state: merchant.country } : merchant.state ? { state: merchant.state } : {}),
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
  return TransactionSchema.parse(input);
}

export const ChargeSchema = z.object({
  id: z.string().min(1),
  created: z.number().int().positive(),
  amount: z.number().int().nonnegative(),
  currency: z.string().length(3),
  payment_method_details: z.object({
    card: z
      .object({
        fingerprint: z.string().min(1),
        checks: z.object({ cvc_check: Check, address_postal_code_check: Check }).partial().nullish(),
        wallet: z.object({ type: z.string() }).nullish(),
      })
      .optional(),
    card_present: z.object({ fingerprint: z.string().min(1), read_method: z.string().nullish() }).optional(),
  }),
});

export interface MerchantProfile {
  id: string;
  mcc: string;
  city?: string;
  state?: string;
  zip?: string;
}

/** A charge on our own account: the merchant is us, the card is identified by its fingerprint. */
export function fromCharge(charge: z.infer<typeof ChargeSchema>, merchant: MerchantProfile): Transaction | undefined {
  const { card, card_present: present } = charge.payment_method_details;
  const fingerprint = card?.fingerprint ?? present?.fingerprint;
  if (fingerprint === undefined) return undefined;
  const method = present === undefined ? "online" : present.read_method === "magnetic_stripe_track2" ? "swipe" : present.read_method === "contactless_emv" ? "contactless" : "chip";
  return TransactionSchema.parse({
    id: charge.id,
    card_id: `fingerprint:${fingerprint}`,
    timestamp: charge.created,
    amount: fromMinorUnits(charge.amount, charge.currency),
    currency: charge.currency,
    method,
    merchant,
    errors: errorsFrom({ cvc: card?.checks?.cvc_check, postal: card?.checks?.address_postal_code_check }),
  } satisfies TransactionInput);
}
