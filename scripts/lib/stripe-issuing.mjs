// A Stripe `issuing_authorization.request` event as the benchmarks send it: payment `i` of a run,
// over `cards` cards, a grocery merchant, amounts and entry methods that vary with `i`.
import Stripe from "stripe";

/**
 * @param {{ run: string, i: number, cards?: number, cardPrefix?: string }} options
 * @returns {Record<string, unknown>} the event object
 */
export function issuingAuthorizationEvent({ run, i, cards = 50, cardPrefix = "bench" }) {
  return {
    id: `evt_${run}_${i}`,
    object: "event",
    type: "issuing_authorization.request",
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `iauth_${run}_${i}`,
        created: Date.UTC(2019, 10, 1) / 1000 + i * 600,
        amount: 0,
        currency: "usd",
        authorization_method: i % 3 === 0 ? "online" : "chip",
        card: { id: `${cardPrefix}_${run}_${i % cards}` },
        pending_request: { amount: 500 + ((i * 7919) % 90_000), currency: "usd" },
        merchant_data: {
          category_code: "5411",
          city: "Richmond",
          state: "VA",
          postal_code: "23229",
          country: "US",
          name: "GROCER",
          network_id: String(-2607170448330360210n + BigInt(i % 40)),
        },
      },
    },
  };
}

/** The headers of a POST of `payload` signed as Stripe signs it (the SDK's test helper). */
export function stripeSigned(payload, secret) {
  return {
    "content-type": "application/json",
    "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret }),
  };
}
