// Provider payloads as the providers send them: Stripe's own fixtures (stripe/openapi) signed
// by the stripe SDK, Adyen's sample notifications (adyen-node-api-library) signed by its
// HmacValidator. Sources: test/fixtures/providers/SOURCES.md.
import { beforeAll, describe, expect, it } from "vitest";
import { SELF } from "cloudflare:test";
import { z } from "zod";
import adyenAuthorisation from "../../fixtures/providers/adyen-authorisationTrue.json";
import adyenCapture from "../../fixtures/providers/adyen-captureFalse.json";
import stripeFixtures from "../../fixtures/providers/stripe-fixtures3.json";
import { TEST_SECRETS } from "../../support/secrets";
import {
  BASE,
  cardView,
  deliverAdyen,
  deliverStripe,
  signAdyen,
  storedDecisions,
  stripeEvent,
  unique,
  unscoredEvent,
} from "../../support/workers/fraud";

const Fixtures = z.object({
  charge: z
    .object({
      id: z.string(),
      payment_method_details: z
        .object({ card: z.object({ fingerprint: z.string() }).loose() })
        .loose(),
    })
    .loose(),
  payment_intent: z
    .object({ id: z.string(), payment_method: z.null(), latest_charge: z.null() })
    .loose(),
  "issuing.authorization": z
    .object({ id: z.string(), card: z.object({ id: z.string() }).loose() })
    .loose(),
});
const stripe = Fixtures.parse(stripeFixtures);
const Notification = z.object({
  notificationItems: z.array(
    z.object({ NotificationRequestItem: z.record(z.string(), z.unknown()) }),
  ),
});
const adyenItemOf = (json: unknown) =>
  Notification.parse(json).notificationItems[0]!.NotificationRequestItem;

/**
 * Stripe's fixture charge under a fresh id and fingerprint (one card per test), otherwise
 * unchanged.
 */
function stripeCharge(changes: Record<string, unknown> = {}) {
  const fingerprint = unique("fp");
  const card = { ...stripe.charge.payment_method_details.card, fingerprint };
  return {
    ...stripe.charge,
    id: unique("ch"),
    payment_method_details: { ...stripe.charge.payment_method_details, card },
    ...changes,
  };
}

async function json(response: Response) {
  expect(response.status).toBe(200);
  return response.json<Record<string, unknown>>();
}

beforeAll(async () => {
  // Load the model first: a cold start exceeds the 1.5 s Issuing deadline.
  await SELF.fetch(`${BASE}/v2/models/fraud-gru/ready`, {
    headers: { authorization: `Bearer ${TEST_SECRETS.API_KEYS.split(",")[0]}` },
  });
}, 120_000);

describe("Stripe's fixtures (stripe/openapi openapi/fixtures3.json)", () => {
  it(
    "charge.succeeded then charge.captured for one ch_ " +
      "is one transaction: one history entry, one decision",
    async () => {
      const charge = stripeCharge();
      const card = `fingerprint:${charge.payment_method_details.card.fingerprint}`;
      const first = await json(await deliverStripe(stripeEvent("charge.succeeded", charge)));
      const second = await json(
        await deliverStripe(stripeEvent("charge.captured", { ...charge, captured: true })),
      );
      expect(first).toMatchObject({
        scored: true,
        duplicate: false,
        decision: { transactionKey: `stripe:${charge.id}`, decidedBy: "provider", approved: true },
      });
      expect(second).toMatchObject({ scored: true, duplicate: true });
      expect(second.decision).toEqual(first.decision);
      const view = await cardView(card);
      expect(view.history).toHaveLength(1);
      expect(view.decisions).toHaveLength(1);
      expect(view.events.map((event) => event.eventType)).toEqual([
        "charge.succeeded",
        "charge.captured",
      ]);
      expect(await storedDecisions(card)).toHaveLength(1);
    },
  );

  it(
    "payment_intent.succeeded / payment_failed with payment_method: " +
      "null are acknowledged and recorded as not scored",
    async () => {
      for (const type of ["payment_intent.succeeded", "payment_intent.payment_failed"]) {
        const event = stripeEvent(type, { ...stripe.payment_intent, id: unique("pi") });
        expect(await json(await deliverStripe(event))).toMatchObject({
          received: true,
          scored: false,
          reason: expect.stringContaining("no card data"),
        });
        expect(await unscoredEvent(event.id)).toMatchObject({
          event_type: type,
          transaction_key: null,
        });
      }
    },
  );

  it(
    "a PaymentIntent is linked to its charge " + "(latest_charge); the charge is what is scored",
    async () => {
      const charge = stripeCharge();
      const intent = stripeEvent("payment_intent.succeeded", {
        ...stripe.payment_intent,
        id: unique("pi"),
        latest_charge: charge.id,
      });
      expect(await json(await deliverStripe(intent))).toMatchObject({
        scored: false,
        reason: expect.stringContaining(charge.id),
      });
      expect(await unscoredEvent(intent.id)).toMatchObject({
        transaction_key: `stripe:${charge.id}`,
      });
      expect(
        await json(await deliverStripe(stripeEvent("charge.succeeded", charge))),
      ).toMatchObject({
        scored: true,
        duplicate: false,
      });
    },
  );

  it(
    "a PaymentIntent with an embedded charge " + "(older API versions) scores that charge, once",
    async () => {
      const charge = stripeCharge();
      const intent = {
        ...stripe.payment_intent,
        id: unique("pi"),
        charges: { object: "list", data: [charge] },
      };
      expect(
        await json(await deliverStripe(stripeEvent("payment_intent.succeeded", intent))),
      ).toMatchObject({
        scored: true,
        duplicate: false,
        decision: { transactionKey: `stripe:${charge.id}` },
      });
      expect(
        await json(await deliverStripe(stripeEvent("charge.succeeded", charge))),
      ).toMatchObject({
        scored: true,
        duplicate: true,
      });
    },
  );

  it(
    "issuing_authorization.request from the fixture: " +
      "decided by the model, keyed on the iauth_",
    async () => {
      const card = unique("ic");
      const authorization = {
        ...stripe["issuing.authorization"],
        id: unique("iauth"),
        card: { ...stripe["issuing.authorization"].card, id: card },
      };
      const body = await json(
        await deliverStripe(stripeEvent("issuing_authorization.request", authorization)),
      );
      expect(body).toEqual({
        approved: expect.any(Boolean),
        metadata: { fraud_score: expect.any(String), fraud_label: expect.any(String) },
      });
      const view = await cardView(card);
      expect(view.decisions[0]).toMatchObject({
        transactionKey: `stripe:${authorization.id}`,
        decidedBy: "model",
      });
      expect(view.history[0]).toMatchObject({
        amount: 7,
        currency: "USD",
        method: "keyed_in",
        merchant: { mcc: "4121", zip: "94107" },
      });
    },
  );

  it(
    "a failed charge is a declined attempt: approved " +
      "false as Stripe decided, the decline code as an error",
    async () => {
      const charge = stripeCharge({ status: "failed", paid: false, failure_code: "incorrect_cvc" });
      const body = await json(await deliverStripe(stripeEvent("charge.failed", charge)));
      expect(body).toMatchObject({
        scored: true,
        decision: { approved: false, decidedBy: "provider" },
      });
      const view = await cardView(`fingerprint:${charge.payment_method_details.card.fingerprint}`);
      expect(view.history[0]?.errors).toEqual(["Bad CVV"]);
    },
  );

  it("without a fingerprint the card is brand + last4 + expiry", async () => {
    const charge = stripeCharge();
    const card = {
      ...charge.payment_method_details.card,
      fingerprint: null,
      last4: unique("").slice(-4),
    };
    const body = await json(
      await deliverStripe(
        stripeEvent("charge.succeeded", {
          ...charge,
          payment_method_details: { ...charge.payment_method_details, card },
        }),
      ),
    );
    expect(body).toMatchObject({
      scored: true,
      decision: { cardId: `stripe:card:visa:${card.last4}:8/2030` },
    });
  });

  it.each([
    ["vnd", 1_500_000_000, 1_500_000_000],
    ["jpy", 5_000, 5_000],
    ["mga", 10_000, 10_000],
    ["isk", 50_000, 500],
    ["kwd", 12_340, 12.34],
    ["usd", 1_099, 10.99],
  ])("Stripe minor units: %s %d is %d", async (currency, amount, major) => {
    const charge = stripeCharge({ currency, amount });
    expect(await json(await deliverStripe(stripeEvent("charge.succeeded", charge)))).toMatchObject({
      scored: true,
    });
    const [entry] = (
      await cardView(`fingerprint:${charge.payment_method_details.card.fingerprint}`)
    ).history;
    expect(entry).toMatchObject({ amount: major, currency: currency.toUpperCase() });
  });
});

describe("Adyen's sample notifications (adyen-node-api-library src/__mocks__/notification)", () => {
  const authorisation = (changes: Record<string, unknown> = {}) =>
    signAdyen({ ...adyenItemOf(adyenAuthorisation), pspReference: unique("psp"), ...changes });

  it(
    "authorisationTrue: accepted, approved as Adyen decided, " +
      "the card from last four + expiry (no alias in the sample)",
    async () => {
      const item = authorisation({
        additionalData: { ...authorisation().additionalData, cardSummary: unique("").slice(-4) },
      });
      const response = await deliverAdyen([item]);
      expect(await response.text()).toBe("[accepted]");
      const card = `adyen:card:…${item.additionalData.cardSummary}/12/2012`;
      const view = await cardView(card);
      expect(view.decisions[0]).toMatchObject({
        transactionKey: `adyen:${item.pspReference}`,
        approved: true,
        decidedBy: "provider",
      });
      expect(view.history[0]).toMatchObject({ amount: 101, currency: "EUR" });
    },
  );

  it("a card's alias is its identity where the notification carries one", async () => {
    const alias = unique("H167852639363479");
    const base = authorisation();
    await deliverAdyen([signAdyen({ ...base, additionalData: { ...base.additionalData, alias } })]);
    expect((await cardView(`adyen:${alias}`)).decisions).toHaveLength(1);
  });

  it.each([
    ["CVC Declined", ["Bad CVV"]],
    ["Expired Card", ["Bad Expiration"]],
    ["Not enough balance", ["Insufficient Balance"]],
    ["Refused", []],
  ])(
    "a refused AUTHORISATION (%s) is a declined attempt: approved false, errors %j",
    async (reason, errors) => {
      const alias = unique("A");
      const base = authorisation({ success: "false", reason });
      await deliverAdyen([
        signAdyen({ ...base, additionalData: { ...base.additionalData, alias } }),
      ]);
      const view = await cardView(`adyen:${alias}`);
      expect(view.decisions[0]).toMatchObject({ approved: false, decidedBy: "provider" });
      expect(view.history[0]?.errors).toEqual(errors);
    },
  );

  it.each([
    ["CLP", 10_000, 100],
    ["IDR", 150_000, 150_000],
    ["CVE", 1_000, 1_000],
    ["ISK", 50_000, 500],
    ["JOD", 12_345, 12.345],
    ["VND", 1_500_000_000, 1_500_000_000],
  ])(
    "Adyen minor units: %s %d is %d (Adyen's table, not ISO 4217)",
    async (currency, value, major) => {
      const alias = unique("A");
      const base = authorisation({ amount: { currency, value } });
      expect(
        await (
          await deliverAdyen([
            signAdyen({ ...base, additionalData: { ...base.additionalData, alias } }),
          ])
        ).text(),
      ).toBe("[accepted]");
      expect((await cardView(`adyen:${alias}`)).history[0]).toMatchObject({
        amount: major,
        currency,
      });
    },
  );

  it(
    "an AUTHORISATION without any card identity " + "is accepted and recorded as not scored",
    async () => {
      const base = authorisation();
      const item = signAdyen({ ...base, additionalData: { hmacSignature: "" } });
      expect(await (await deliverAdyen([item])).text()).toBe("[accepted]");
      expect(await unscoredEvent(`${item.pspReference}:AUTHORISATION`)).toMatchObject({
        provider: "adyen",
        reason: expect.stringContaining("no card identity"),
      });
    },
  );

  it("captureFalse: accepted, nothing scored", async () => {
    const item = signAdyen({ ...adyenItemOf(adyenCapture), pspReference: unique("psp") });
    expect(await (await deliverAdyen([item])).text()).toBe("[accepted]");
    expect(await unscoredEvent(`${item.pspReference}:CAPTURE`)).toBeNull();
  });
});

describe("one Issuing authorization, two events", () => {
  it(
    "issuing_authorization.created after the request reads the " +
      "request's decision back; alone, it records Stripe's outcome",
    async () => {
      const fixture = stripe["issuing.authorization"];
      const card = unique("ic");
      const authorization = {
        ...fixture,
        id: unique("iauth"),
        card: { ...fixture.card, id: card },
      };
      const request = await json(
        await deliverStripe(stripeEvent("issuing_authorization.request", authorization)),
      );
      const created = await json(
        await deliverStripe(
          stripeEvent("issuing_authorization.created", {
            ...authorization,
            approved: !request.approved,
            pending_request: null,
            amount: 700,
          }),
        ),
      );
      expect(created).toMatchObject({
        scored: true,
        duplicate: true,
        decision: { decidedBy: "model", approved: request.approved },
      });
      expect((await cardView(card)).history).toHaveLength(1);

      const alone = {
        ...fixture,
        id: unique("iauth"),
        card: { ...fixture.card, id: unique("ic") },
        approved: false,
        pending_request: null,
        amount: 700,
      };
      expect(
        await json(await deliverStripe(stripeEvent("issuing_authorization.created", alone))),
      ).toMatchObject({
        scored: true,
        duplicate: false,
        decision: { decidedBy: "provider", approved: false },
      });
    },
  );
});
