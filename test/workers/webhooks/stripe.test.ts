// Stripe webhooks inside workerd with local D1 and Durable Objects, signed by the stripe SDK.
import { createExecutionContext, env, SELF } from "cloudflare:test";
import Stripe from "stripe";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { TOLERANCE_SECONDS, verifyStripe } from "../../../src/tasks/fraud/sources/stripe-signature";
import { TEST_SECRETS } from "../../support/secrets";
import {
  BASE,
  cardView,
  deliverStripe,
  issuingAuthorization,
  storedDecisions,
  storedHistory,
  stripeEvent,
  T0,
  unique,
  unscoredEvent,
} from "../../support/workers/fraud";

describe("POST /v1/webhooks/stripe", () => {
  // A cold model takes longer than the 1.5 s authorization deadline to load (then the policy
  // answers).
  beforeAll(async () => {
    await SELF.fetch(`${BASE}/v2/models/fraud-gru/ready`, {
      headers: { authorization: `Bearer ${TEST_SECRETS.API_KEYS.split(",")[0]}` },
    });
  }, 120_000);

  it(
    "answers an Issuing authorization request with {approved} " +
      "and Stripe-Version, after storing the decision",
    async () => {
      const card = unique("ic");
      const response = await deliverStripe(
        stripeEvent("issuing_authorization.request", issuingAuthorization(card)),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get("stripe-version")).toBe("2025-09-30.clover");
      const body = await response.json<{ approved: boolean; metadata: { fraud_label: string } }>();
      expect(typeof body.approved).toBe("boolean");
      const [decision] = await storedDecisions(card);
      expect(decision).toMatchObject({
        provider: "stripe",
        event_type: "issuing_authorization.request",
        model: "fraud-gru",
      });
      expect(decision?.label).toBe(body.metadata.fraud_label);
      expect(await storedHistory(card)).toHaveLength(1);
    },
  );

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
    const later = stripeEvent(
      "issuing_authorization.request",
      issuingAuthorization(card, { created: T0 + 3600 }),
    );
    const earlier = stripeEvent(
      "issuing_authorization.request",
      issuingAuthorization(card, { created: T0 }),
    );
    expect((await deliverStripe(later)).status).toBe(200);
    expect((await deliverStripe(earlier)).status).toBe(200);
    const decisions = await storedDecisions(card);
    // The later one arrived first (no history); the earlier one arrived second but its
    // history is what came before it in time: nothing.
    expect(decisions.map((row) => row.history_length)).toEqual([0, 0]);
    const history = await storedHistory(card);
    expect(history.map((transaction) => transaction.timestamp)).toEqual([
      T0 * 1000,
      (T0 + 3600) * 1000,
    ]);
    // A third event after both sees both.
    await deliverStripe(
      stripeEvent(
        "issuing_authorization.request",
        issuingAuthorization(card, { created: T0 + 7200 }),
      ),
    );
    expect((await storedDecisions(card)).at(-1)?.history_length).toBe(2);
  });

  it(
    "a D1 copy that fails does not lose the decision: " +
      "the card's outbox replays it once D1 takes it",
    async () => {
      const fingerprint = unique("fp");
      const card = `fingerprint:${fingerprint}`;
      const event = stripeEvent("charge.succeeded", {
        id: unique("ch"),
        created: T0,
        amount: 1_250,
        currency: "usd",
        payment_method_details: { card: { fingerprint } },
      });
      await env.DB.prepare(
        "CREATE TRIGGER refuse_decisions BEFORE INSERT ON " +
          "decisions BEGIN SELECT RAISE(ABORT, 'disk full'); END",
      ).run();
      let response: Response;
      try {
        response = await deliverStripe(event);
        expect(response.status).toBe(200);
        expect(await storedDecisions(card)).toHaveLength(0);
      } finally {
        await env.DB.prepare("DROP TRIGGER refuse_decisions").run();
      }
      const view = await cardView(card); // reading the card replays its outbox
      expect(view.decisions).toHaveLength(1);
      expect(view.history).toHaveLength(1);
      expect(await storedDecisions(card)).toHaveLength(1);
    },
  );

  it("rejects a bad signature with 400 and stores nothing", async () => {
    const card = unique("ic");
    const response = await deliverStripe(
      stripeEvent("issuing_authorization.request", issuingAuthorization(card)),
      { secret: "whsec_wrong" },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "headers.stripe-signature" });
    expect(await storedDecisions(card)).toHaveLength(0);
  });

  it("rejects a signature older than the 300 s tolerance", async () => {
    const card = unique("ic");
    const stale = Math.floor(Date.now() / 1000) - 301;
    const response = await deliverStripe(
      stripeEvent("issuing_authorization.request", issuingAuthorization(card)),
      { timestamp: stale },
    );
    expect(response.status).toBe(400);
    expect(await storedDecisions(card)).toHaveLength(0);
  });

  it("acknowledges an event type that carries no transaction, storing nothing", async () => {
    const response = await deliverStripe(
      stripeEvent("customer.created", { id: "cus_1", object: "customer" }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ received: true, ignored: expect.any(String) });
  });

  it(
    "a signed authorization that cannot be scored gets " +
      "ISSUING_UNSCORED_POLICY (decline) and is recorded with the reason",
    async () => {
      const card = unique("ic");
      const object = {
        ...issuingAuthorization(card),
        merchant_data: { category_code: "groceries", network_id: "1" },
      };
      const event = stripeEvent("issuing_authorization.request", object);
      const response = await deliverStripe(event);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        approved: false,
        metadata: { fraud_unscored: expect.stringContaining("merchant.mcc") },
      });
      expect(await unscoredEvent(event.id)).toMatchObject({
        provider: "stripe",
        approved: 0,
        reason: expect.stringContaining("merchant.mcc"),
      });
      expect(await storedDecisions(card)).toHaveLength(0);
    },
  );

  it("the policy is configurable: approve", async () => {
    const app = createApp();
    const event = stripeEvent("issuing_authorization.request", {
      ...issuingAuthorization(unique("ic")),
      authorization_method: "telepathy",
    });
    const payload = JSON.stringify(event);
    const signature = await Stripe.webhooks.generateTestHeaderStringAsync({
      payload,
      secret: TEST_SECRETS.STRIPE_WEBHOOK_SECRET,
      cryptoProvider: Stripe.createSubtleCryptoProvider(),
    });
    const response = await app.request(
      "/v1/webhooks/stripe",
      {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": signature },
        body: payload,
      },
      { ...env, ISSUING_UNSCORED_POLICY: "approve" },
      createExecutionContext(),
    );
    expect(await response.json()).toMatchObject({
      approved: true,
      metadata: { fraud_unscored: expect.stringContaining("authorization_method") },
    });
  });

  it(
    "a transaction dated in the future is " + "acknowledged as not scored, naming the field",
    async () => {
      const fingerprint = unique("fp");
      const future = Math.floor(Date.now() / 1000) + 7 * 86400;
      const event = stripeEvent("charge.succeeded", {
        id: unique("ch"),
        created: future,
        amount: 100,
        currency: "usd",
        payment_method_details: { card: { fingerprint } },
      });
      const response = await deliverStripe(event);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        received: true,
        scored: false,
        reason: expect.stringContaining("timestamp"),
      });
      expect(await storedDecisions(`fingerprint:${fingerprint}`)).toHaveLength(0);
    },
  );

  // Through the route the clock is the Worker's when it checks, which a busy machine puts
  // seconds after the test's: a case near the boundary uses a margin no delay can eat (the
  // boundary itself is tested below against a clock the test controls).
  it.each([
    ["one hour", 3600],
    ["ten years", 10 * 365 * 86400],
    ["the tolerance and a minute", TOLERANCE_SECONDS + 60],
  ])(
    "rejects a signature dated %s in the future (the 300 s tolerance applies both ways)",
    async (_, ahead) => {
      const card = unique("ic");
      const response = await deliverStripe(
        stripeEvent("issuing_authorization.request", issuingAuthorization(card)),
        { timestamp: Math.floor(Date.now() / 1000) + ahead },
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        field: "headers.stripe-signature",
        detail: expect.stringContaining("future"),
      });
      expect(await storedDecisions(card)).toHaveLength(0);
    },
  );

  it("accepts a signature a little ahead of our clock (within the tolerance)", async () => {
    const response = await deliverStripe(
      stripeEvent("issuing_authorization.request", issuingAuthorization(unique("ic"))),
      { timestamp: Math.floor(Date.now() / 1000) + 120 },
    );
    expect(response.status).toBe(200);
  });

  it(
    "the 300 s tolerance's boundary, on a clock the " +
      "test controls: 300 s ahead passes, 301 s does not",
    async () => {
      const payload = JSON.stringify(
        stripeEvent("issuing_authorization.request", issuingAuthorization(unique("ic"))),
      );
      const secret = TEST_SECRETS.STRIPE_WEBHOOK_SECRET;
      // Our clock, on a whole second: `seconds` ahead of it is exactly that many seconds.
      const now = Math.ceil(Date.now() / 1000) * 1000;
      const signedAhead = (seconds: number) =>
        Stripe.webhooks.generateTestHeaderStringAsync({
          payload,
          secret,
          timestamp: now / 1000 + seconds,
          cryptoProvider: Stripe.createSubtleCryptoProvider(),
        });
      const at = await signedAhead(TOLERANCE_SECONDS);
      await expect(verifyStripe(payload, at, secret, now)).resolves.toMatchObject({
        type: "issuing_authorization.request",
      });
      const beyond = await signedAhead(TOLERANCE_SECONDS + 1);
      await expect(verifyStripe(payload, beyond, secret, now)).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("future"),
      });
    },
  );

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
      payment_method_details: {
        type: "card",
        card: { fingerprint, brand: "visa", checks: { cvc_check: "pass" }, wallet: null },
      },
    };
    const response = await deliverStripe(stripeEvent("charge.succeeded", charge));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      received: true,
      scored: true,
      duplicate: false,
      decision: { cardId: `fingerprint:${fingerprint}`, decidedBy: "provider", approved: true },
    });
    expect(await storedDecisions(`fingerprint:${fingerprint}`)).toHaveLength(1);
  });

  it("503 without a webhook secret configured (Stripe retries)", async () => {
    const app = createApp();
    const response = await app.request(
      "/v1/webhooks/stripe",
      {
        method: "POST",
        headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=x" },
        body: "{}",
      },
      { ...env, STRIPE_WEBHOOK_SECRET: "" },
      createExecutionContext(),
    );
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "not_configured" });
  });
});
