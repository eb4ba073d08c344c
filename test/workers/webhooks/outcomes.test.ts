// Outcomes close the loop: Stripe disputes and early fraud warnings (Stripe's own fixtures,
// signed by the stripe SDK) and Adyen chargebacks and notifications of fraud (built on Adyen's
// published mock, signed by its HmacValidator) label the payment they concern, once however
// often they are delivered, kept for a payment never scored, and counted by
// GET /v1/fraud/performance.
import { env, SELF } from "cloudflare:test";
import { NotificationRequestItem } from "@adyen/api-library/lib/src/typings/notification/models";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import adyenAuthorisation from "../../fixtures/providers/adyen-authorisationTrue.json";
import stripeOutcomesJson from "../../fixtures/providers/stripe-outcomes.json";
import {
  BASE,
  deliverAdyen,
  deliverStripe,
  signAdyen,
  storedDecisions,
  stripeEvent,
  T0,
  unique,
  unscoredEvent,
} from "../../support/workers/fraud";
import { KEY } from "../../support/workers/helpers";

const stripeOutcomes = z
  .object({
    dispute: z.object({ id: z.string(), charge: z.string() }).loose(),
    "radar.early_fraud_warning": z.object({ id: z.string(), charge: z.string() }).loose(),
  })
  .parse(stripeOutcomesJson);
const published = z
  .object({
    notificationItems: z
      .array(
        z.object({
          NotificationRequestItem: z
            .object({ additionalData: z.record(z.string(), z.string()) })
            .loose(),
        }),
      )
      .min(1),
  })
  .parse(adyenAuthorisation).notificationItems[0]!.NotificationRequestItem;

const outcomesOf = async (key: string) =>
  (
    await env.DB.prepare("SELECT * FROM fraud_outcomes WHERE transaction_key = ? ORDER BY kind")
      .bind(key)
      .all<{ kind: string; fraudulent: number; reason: string; event_id: string }>()
  ).results;

interface Performance {
  decisions: number;
  fraudulent: number;
  flagged: { FRAUD: number; SUSPECT: number };
  caught: { FRAUD: number; SUSPECT: number };
  precision: { FRAUD: number | null; SUSPECT: number | null };
  unscored_outcomes: number;
}

const performance = async (query = "") => {
  const response = await SELF.fetch(`${BASE}/v1/fraud/performance${query}`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(response.status).toBe(200);
  return response.json<Performance>();
};

/** A charge decided by the model (charge.succeeded), its key and label. */
async function decidedCharge() {
  const fingerprint = unique("fp");
  const charge = {
    id: unique("ch"),
    object: "charge",
    created: T0,
    amount: 189_900,
    currency: "usd",
    status: "succeeded",
    payment_method_details: { type: "card", card: { fingerprint } },
  };
  const response = await deliverStripe(stripeEvent("charge.succeeded", charge));
  const { decision } = await response.json<{ decision: { label: string } }>();
  await storedDecisions(`fingerprint:${fingerprint}`); // the D1 copy, replayed now
  return { id: charge.id, label: decision.label };
}

describe("outcomes", () => {
  it("a Stripe dispute (Visa 10.4, fraud) labels its charge once however often delivered", async () => {
    const before = await performance();
    const charge = await decidedCharge();
    const dispute = { ...stripeOutcomes.dispute, charge: charge.id };
    const event = stripeEvent("charge.dispute.created", dispute);
    for (let i = 0; i < 3; i++) {
      const response = await deliverStripe(event);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        received: true,
        duplicate: i > 0,
        outcome: { kind: "dispute", fraudulent: true, transactionKey: `stripe:${charge.id}` },
      });
    }
    // An early fraud warning for the same charge: a second outcome, still one label.
    const warning = { ...stripeOutcomes["radar.early_fraud_warning"], charge: charge.id };
    expect(
      (await deliverStripe(stripeEvent("radar.early_fraud_warning.created", warning))).status,
    ).toBe(200);
    const rows = await outcomesOf(`stripe:${charge.id}`);
    expect(rows.map((row) => [row.kind, row.fraudulent])).toEqual([
      ["dispute", 1],
      ["early_fraud_warning", 1],
    ]);
    expect(rows[0]?.reason).toBe("general (10.4)");

    const after = await performance();
    expect(after.fraudulent - before.fraudulent).toBe(1);
    expect(after.caught.FRAUD - before.caught.FRAUD).toBe(charge.label === "FRAUD" ? 1 : 0);
    const flagged = charge.label !== "LEGIT" ? 1 : 0;
    expect(after.caught.SUSPECT - before.caught.SUSPECT).toBe(flagged);
  });

  it("a dispute for another reason is kept but is no fraud label", async () => {
    const charge = await decidedCharge();
    const dispute = {
      ...stripeOutcomes.dispute,
      charge: charge.id,
      reason: "product_not_received",
      payment_method_details: {
        type: "card",
        card: { brand: "visa", case_type: "chargeback", network_reason_code: "13.1" },
      },
    };
    const response = await deliverStripe(stripeEvent("charge.dispute.created", dispute));
    expect(await response.json()).toMatchObject({ outcome: { fraudulent: false } });
    expect((await outcomesOf(`stripe:${charge.id}`)).map((row) => row.fraudulent)).toEqual([0]);
  });

  it("an outcome for a payment never scored is kept and counted apart", async () => {
    const before = await performance();
    const warning = { ...stripeOutcomes["radar.early_fraud_warning"], charge: unique("ch") };
    expect(
      (await deliverStripe(stripeEvent("radar.early_fraud_warning.created", warning))).status,
    ).toBe(200);
    expect(await outcomesOf(`stripe:${warning.charge}`)).toHaveLength(1);
    const after = await performance();
    expect(after.unscored_outcomes - before.unscored_outcomes).toBe(1);
    expect(after.fraudulent).toBe(before.fraudulent);
  });

  it("Adyen CHARGEBACK (fraud code) and NOTIFICATION_OF_FRAUD label the original payment once", async () => {
    const original = unique("psp");
    const chargeback = signAdyen({
      ...published,
      pspReference: unique("psp"),
      originalReference: original,
      eventCode: NotificationRequestItem.EventCodeEnum.Chargeback,
      reason: "Fraudulent Multiple Transactions",
      additionalData: { ...published.additionalData, chargebackReasonCode: "4837" },
    });
    const notice = signAdyen({
      ...published,
      pspReference: unique("psp"),
      originalReference: original,
      eventCode: NotificationRequestItem.EventCodeEnum.NotificationOfFraud,
      reason: "Fraud reported by issuer",
    });
    for (let i = 0; i < 2; i++) {
      const response = await deliverAdyen([chargeback, notice]);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("[accepted]");
    }
    const rows = await outcomesOf(`adyen:${original}`);
    expect(rows.map((row) => [row.kind, row.fraudulent, row.reason])).toEqual([
      ["chargeback", 1, "Fraudulent Multiple Transactions (4837)"],
      ["notification_of_fraud", 1, "Fraud reported by issuer"],
    ]);
  });

  it("shows live precision and recall on /metrics", async () => {
    const charge = await decidedCharge();
    const warning = { ...stripeOutcomes["radar.early_fraud_warning"], charge: charge.id };
    await deliverStripe(stripeEvent("radar.early_fraud_warning.created", warning));
    const response = await SELF.fetch(`${BASE}/metrics`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const text = await response.text();
    const fraudulent = Number(/^edge_fraud_fraudulent\{window="30d"\} (\d+)$/m.exec(text)?.[1]);
    expect(fraudulent).toBeGreaterThanOrEqual(1);
    for (const gauge of ["precision", "recall"])
      for (const label of ["FRAUD", "SUSPECT"])
        expect(text).toMatch(
          new RegExp(
            `^edge_fraud_${gauge}\\{label="${label}",window="30d"\\} (NaN|[0-9.e-]+)$`,
            "m",
          ),
        );
    const recall = Number(
      /^edge_fraud_recall\{label="SUSPECT",window="30d"\} (.+)$/m.exec(text)?.[1],
    );
    expect(recall).toBeGreaterThanOrEqual(0);
    expect(recall).toBeLessThanOrEqual(1);
  });

  it("keeps an outcome event it cannot read as not scored, with the field", async () => {
    const event = stripeEvent("charge.dispute.created", { id: unique("dp"), created: T0 });
    const response = await deliverStripe(event);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      received: true,
      scored: false,
      reason: expect.stringMatching(/^data\.object\.charge: /),
    });
    expect(await unscoredEvent(event.id)).toMatchObject({ event_type: "charge.dispute.created" });
  });

  it("refuses a window that ends before it starts, naming the field", async () => {
    const response = await SELF.fetch(
      `${BASE}/v1/fraud/performance?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z`,
      { headers: { authorization: `Bearer ${KEY}` } },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "since" });
  });
});
