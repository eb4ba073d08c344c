// Builders for payment-provider payloads, signed with the providers' own schemes.
import { env, SELF } from "cloudflare:test";
import { NotificationRequestItem } from "@adyen/api-library/lib/src/typings/notification/models";
import HmacValidator from "@adyen/api-library/lib/src/utils/hmacValidator";
import Stripe from "stripe";
import { z } from "zod";
import { TEST_SECRETS } from "../secrets";

export const BASE = "https://edge.test";

/** 2019-10-01T12:00:00Z, inside the fraud model's held-out period. */
export const T0 = Date.UTC(2019, 9, 1, 12, 0) / 1000;

let counter = 0;
export const unique = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

export function issuingAuthorization(
  card: string,
  overrides: { created?: number; amount?: number; network_id?: string } = {},
) {
  return {
    id: unique("iauth"),
    object: "issuing.authorization",
    created: overrides.created ?? T0,
    amount: 0,
    currency: "usd",
    authorization_method: "chip",
    card: { id: card, object: "issuing.card" },
    pending_request: {
      amount: overrides.amount ?? 4_250,
      currency: "usd",
      is_amount_controllable: false,
    },
    merchant_data: {
      category: "grocery_stores_supermarkets",
      category_code: "5411",
      city: "Richmond",
      state: "VA",
      postal_code: "23229",
      country: "US",
      name: "CORNER GROCER",
      network_id: overrides.network_id ?? "-2607170448330360210",
    },
    verification_data: {
      cvc_check: "match",
      expiry_check: "match",
      address_postal_code_check: "match",
    },
  };
}

export function stripeEvent(type: string, object: unknown, id = unique("evt")) {
  return {
    id,
    object: "event",
    type,
    api_version: "2025-09-30.clover",
    created: T0,
    data: { object },
    livemode: false,
  };
}

const cryptoProvider = Stripe.createSubtleCryptoProvider();

/**
 * Delivers a Stripe event signed by the stripe SDK (optionally at another time or with another
 * secret).
 */
export async function deliverStripe(
  event: unknown,
  options: { timestamp?: number; secret?: string } = {},
): Promise<Response> {
  const payload = JSON.stringify(event);
  const signature = await Stripe.webhooks.generateTestHeaderStringAsync({
    payload,
    secret: options.secret ?? TEST_SECRETS.STRIPE_WEBHOOK_SECRET,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    cryptoProvider,
  });
  return SELF.fetch(`${BASE}/v1/webhooks/stripe`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: payload,
  });
}

type EventCode = NotificationRequestItem.EventCodeEnum;

export function adyenItem(
  alias: string,
  overrides: {
    pspReference?: string;
    eventDate?: string;
    value?: number;
    eventCode?: EventCode;
  } = {},
) {
  const item: NotificationRequestItem & { additionalData: Record<string, string> } = {
    pspReference: overrides.pspReference ?? unique("psp"),
    merchantAccountCode: "EdgeShopECOM",
    merchantReference: unique("order"),
    amount: { value: overrides.value ?? 12_999, currency: "USD" },
    eventCode: overrides.eventCode ?? NotificationRequestItem.EventCodeEnum.Authorisation,
    eventDate: overrides.eventDate ?? "2019-10-01T12:00:00+00:00",
    success: NotificationRequestItem.SuccessEnum.True,
    paymentMethod: "visa",
    additionalData: {
      alias,
      cardSummary: "1111",
      cardBin: "411111",
      expiryDate: "03/2030",
      hmacSignature: "",
    },
  };
  // Signed by Adyen's own library over Adyen's signing string.
  item.additionalData.hmacSignature = new HmacValidator().calculateHmac(
    item,
    TEST_SECRETS.ADYEN_HMAC_KEY,
  );
  return item;
}

export function deliverAdyen(items: unknown[]): Promise<Response> {
  return SELF.fetch(`${BASE}/v1/webhooks/adyen`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      live: "false",
      notificationItems: items.map((item) => ({ NotificationRequestItem: item })),
    }),
  });
}

/**
 * The decisions copied into D1 for a card, by transaction time, once the card's outbox has been
 * replayed (the copy runs in the card's alarm, after the provider was answered).
 */
export async function storedDecisions(cardId: string) {
  await cardView(cardId);
  const { results } = await env.DB.prepare(
    "SELECT * FROM decisions WHERE card_id = ? ORDER BY transaction_at",
  )
    .bind(cardId)
    .all();
  return results;
}

/** The card's Durable Object: history, decisions and deliveries (the source of truth). */
export function cardView(cardId: string) {
  return env.CARD_HISTORY.get(env.CARD_HISTORY.idFromName(cardId)).view();
}

export async function storedHistory(cardId: string) {
  return (await cardView(cardId)).history;
}

export async function unscoredEvent(eventId: string) {
  return env.DB.prepare("SELECT * FROM unscored_events WHERE event_id = ?").bind(eventId).first();
}

/**
 * An Adyen notification item as Adyen's library types it (enums checked), from JSON such as its
 * mocks.
 */
const AdyenItemSchema = z
  .object({
    pspReference: z.string(),
    originalReference: z.string().optional(),
    merchantAccountCode: z.string(),
    merchantReference: z.string(),
    amount: z.object({ value: z.number(), currency: z.string() }),
    eventCode: z.enum(NotificationRequestItem.EventCodeEnum),
    eventDate: z.string(),
    success: z.enum(NotificationRequestItem.SuccessEnum),
    reason: z.string().optional(),
    paymentMethod: z.string().optional(),
    additionalData: z.record(z.string(), z.string()).optional(),
  })
  .loose();
export type AdyenItem = z.infer<typeof AdyenItemSchema>;

/** Parses an item and signs it with Adyen's own HmacValidator and the test key. */
export function signAdyen(json: unknown): AdyenItem & { additionalData: Record<string, string> } {
  const item = AdyenItemSchema.parse(structuredClone(json));
  const signed = { ...item, additionalData: { ...item.additionalData, hmacSignature: "" } };
  signed.additionalData.hmacSignature = new HmacValidator().calculateHmac(
    signed,
    TEST_SECRETS.ADYEN_HMAC_KEY,
  );
  return signed;
}
