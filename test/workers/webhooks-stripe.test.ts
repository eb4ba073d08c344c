// Stripe webhooks inside workerd with local D1 and Durable Objects, signed by the stripe SDK.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { deliverStripe, issuingAuthorization, storedDecisions, storedHistory, stripeEvent, T0, unique } from "./fraud-helpers";

describe("POST /v1/webhooks/stripe", () => {
  it("answers an Issuing authorization request with {approved} and Stripe-Version, after storing the decision", async () => {
    const card = unique("ic");
    const response = await deliverStripe(stripeEvent("issuing_authorization.request", issuingAuthorization(card)));
    expect(response.status).toBe(200);
    expect(response.headers.get("stripe-version")).toBe("2025-09-30.clover");
    const body = await response.json<{ approved: boolean; metadata: { fraud_label: string } }>();
    expect(typeof body.approved).toBe("boolean");
    const [decision] = await storedDecisions(card);
    expect(decision).toMatchObject({ provider: "stripe", event_type: "issuing_authorization.request", model: "fraud-gru" });
    expect(decision?.label).toBe(body.metadata.fraud_label);
    expect(await storedHistory(card)).toHaveLength(1);
  });

  it("a duplicate delivery returns the first decision and never appends twice", async () => {
    const card = unique("ic");
    const event = stripeEvent("issuing_authorization.request", issuingAuthorization(card));
    const first = await (await deliverStripe(event)).json();
    const again = await deliverStripe(event);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(first);
    expect(await storedDecisions(card)).toHaveLength(1);
    expect(await storedHistory(card)).toHaveLength(1);
  });

  it("scores out-of-order events against the history before them in time", async () => {
    const card = unique("ic");
    const later = stripeEvent("issuing_authorization.request", issuingAuthorization(card, { created: T0 + 3600 }));
    const earlier = stripeEvent("issuing_authorization.request", issuingAuthorization(card, { created: T0 }));
    expect((await deliverStripe(later)).status).toBe(200);
    expect((await deliverStripe(earlier)).status).toBe(200);
    const decisions = await storedDecisions(card);
    // The later one arrived first (no history); the earlier one arrived second but its
    // history is what came before it in time: nothing.
    expect(decisions.map((row) => row.history_length)).toEqual([0, 0]);
    const history = await storedHistory(card);
    expect(history.map((transaction) => transaction.timestamp)).toEqual([T0 * 1000, (T0 + 3600) * 1000]);
    // A third event after both sees both.
    await deliverStripe(stripeEvent("issuing_authorization.request", issuingAuthorization(card, { created: T0 + 7200 })));
    expect((await storedDecisions(card)).at(-1)?.history_length).toBe(2);
  });

  it("a failure to store answers non-2xx so Stripe retries; the retry records once and never doubles history", async () => {
    const card = unique("ic");
    const event = stripeEvent("charge.succeeded", {
      id: unique("ch"),
      created: T0,
      amount: 1_250,
      currency: "usd",
      payment_method_details: { card: { fingerprint: card } },
    });
    // The decision insert fails after the history append succeeded.
    await env.DB.prepare("CREATE TRIGGER refuse_decisions BEFORE INSERT ON decisions BEGIN SELECT RAISE(ABORT, 'disk full'); END").run();
    let failed: Response;
    try {
      failed = await deliverStripe(event);
    } finally {
      await env.DB.prepare("DROP TRIGGER refuse_decisions").run();
    }
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await storedDecisions(`fingerprint:${card}`)).toHaveLength(0);

    const retried = await deliverStripe(event);
    expect(retried.status).toBe(200);
    expect(await storedDecisions(`fingerprint:${card}`)).toHaveLength(1);
    expect(await storedHistory(`fingerprint:${card}`)).toHaveLength(1);
  });

  it("rejects a bad signature with 400 and stores nothing", async () => {
    const card = unique("ic");
    const response = await deliverStripe(stripeEvent("issuing_authorization.request", issuingAuthorization(card)), { secret: "whsec_wrong" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "headers.stripe-signature" });
    expect(await storedDecisions(card)).toHaveLength(0);
  });

  it("rejects a signature older than the 300 s tolerance", async () => {
    const card = unique("ic");
    const stale = Math.floor(Date.now() / 1000) - 301;
    const response = await deliverStripe(stripeEvent("issuing_authorization.request", issuingAuthorization(card)), { timestamp: stale });
    expect(response.status).toBe(400);
    expect(await storedDecisions(card)).toHaveLength(0);
  });

  it("acknowledges an event type that carries no transaction, storing nothing", async () => {
    const response = await deliverStripe(stripeEvent("customer.created", { id: "cus_1", object: "customer" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ received: true, ignored: expect.any(String) });
  });

  it("400 naming the field for a signed but malformed authorization", async () => {
    const card = unique("ic");
    const object = { ...issuingAuthorization(card), merchant_data: { category_code: "groceries", network_id: "1" } };
    const response = await deliverStripe(stripeEvent("issuing_authorization.request", object));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "data.object.merchant_data.category_code" });
    expect(await storedDecisions(card)).toHaveLength(0);
  });

  it("400 for a transaction dated in the future", async () => {
    const card = unique("ic");
    const future = Math.floor(Date.now() / 1000) + 7 * 86400;
    const response = await deliverStripe(stripeEvent("issuing_authorization.request", issuingAuthorization(card, { created: future })));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "timestamp" });
    expect(await storedDecisions(card)).toHaveLength(0);
  });

  it("400 for a body that is not JSON", async () => {
    const response = await deliverStripe("not json at all");
    expect(response.status).toBe(400);
  });

  it("scores and records a charge by its card fingerprint", async () => {
    const fingerprint = unique("fp");
    const charge = {
      id: unique("ch"),
      object: "charge",
      created: T0,
      amount: 2_599,
      currency: "usd",
      payment_method_details: { type: "card", card: { fingerprint, brand: "visa", checks: { cvc_check: "pass" }, wallet: null } },
    };
    const response = await deliverStripe(stripeEvent("charge.succeeded", charge));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ received: true, duplicate: false, decision: { cardId: `fingerprint:${fingerprint}` } });
    expect(await storedDecisions(`fingerprint:${fingerprint}`)).toHaveLength(1);
  });

  it("503 without a webhook secret configured (Stripe retries)", async () => {
    const app = createApp();
    const response = await app.request("/v1/webhooks/stripe", { method: "POST", headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=x" }, body: "{}" }, { ...env, STRIPE_WEBHOOK_SECRET: "" });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "not_configured" });
  });
});
