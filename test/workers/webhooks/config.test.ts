// Operator errors: a Worker whose D1 lacks its migrations answers the webhooks 503
// not_configured naming the missing migration (the provider retries; nothing is lost) and
// reports it in /v2/health/ready. The Adyen and Stripe HMAC keys are imported once per configured
// value.
import { applyD1Migrations, createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { hmacKeyImports, verifyItem } from "../../../src/tasks/fraud/sources/adyen-signature";
import { NotificationItemSchema } from "../../../src/tasks/fraud/sources/adyen";
import {
  cryptoProvider,
  stripeKeyImports,
  verifyStripe,
} from "../../../src/tasks/fraud/sources/stripe-signature";
import { TEST_SECRETS } from "../../support/secrets";
import { adyenItem, issuingAuthorization, stripeEvent, unique } from "../../support/workers/fraud";
import Stripe from "stripe";

async function signedStripe(event: unknown) {
  const payload = JSON.stringify(event);
  const signature = await Stripe.webhooks.generateTestHeaderStringAsync({
    payload,
    secret: TEST_SECRETS.STRIPE_WEBHOOK_SECRET,
    cryptoProvider: Stripe.createSubtleCryptoProvider(),
  });
  return {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: payload,
  };
}

describe("a D1 database without its migrations", () => {
  const app = createApp();
  const bare = () => ({ ...env, DB: env.EMPTY_DB });

  it(
    "webhooks answer 503 not_configured naming every " +
      "missing migration; health/ready reports them",
    async () => {
      const stripe = await app.request(
        "/v1/webhooks/stripe",
        await signedStripe(
          stripeEvent("issuing_authorization.request", issuingAuthorization(unique("ic"))),
        ),
        bare(),
        createExecutionContext(),
      );
      expect(stripe.status).toBe(503);
      expect(stripe.headers.get("retry-after")).toBe("60");
      expect(await stripe.json()).toMatchObject({
        code: "not_configured",
        detail: expect.stringMatching(
          /0001_decisions\.sql, 0002_transaction_decisions\.sql, 0004_fraud_reasons_outcomes\.sql/,
        ),
      });

      const adyen = await app.request(
        "/v1/webhooks/adyen",
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            live: "false",
            notificationItems: [{ NotificationRequestItem: adyenItem(unique("A")) }],
          }),
        },
        bare(),
        createExecutionContext(),
      );
      expect(adyen.status).toBe(503);
      expect(await adyen.json()).toMatchObject({
        code: "not_configured",
        detail: expect.stringContaining("0001_decisions.sql"),
      });

      const health = await app.request("/v2/health/ready", {}, bare(), createExecutionContext());
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({
        ready: false,
        not_configured: {
          missing_migrations: [
            "0001_decisions.sql",
            "0002_transaction_decisions.sql",
            "0004_fraud_reasons_outcomes.sql",
          ],
        },
      });
    },
  );

  it("names only what is still missing once the first migration is applied", async () => {
    await applyD1Migrations(env.EMPTY_DB, env.TEST_MIGRATIONS.slice(0, 1));
    const health = await app.request("/v2/health/ready", {}, bare(), createExecutionContext());
    expect(await health.json()).toMatchObject({
      not_configured: {
        missing_migrations: ["0002_transaction_decisions.sql", "0004_fraud_reasons_outcomes.sql"],
      },
    });
  });

  it("with every migration applied, health/ready says nothing of it", async () => {
    const health = await app.request("/v2/health/ready", {}, env, createExecutionContext());
    expect(await health.json()).not.toHaveProperty("not_configured");
  });
});

describe("the Adyen HMAC key", () => {
  it("is imported once per configured value, not per notification item", async () => {
    const item = NotificationItemSchema.parse(adyenItem(unique("A")));
    await verifyItem(item, TEST_SECRETS.ADYEN_HMAC_KEY);
    const before = hmacKeyImports();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => verifyItem(item, TEST_SECRETS.ADYEN_HMAC_KEY)),
    );
    expect(results.every(Boolean)).toBe(true);
    expect(hmacKeyImports()).toBe(before);
    // A rotated key is one more import, then reused too.
    const rotated = "00".repeat(32);
    await verifyItem(item, rotated);
    await verifyItem(item, rotated);
    expect(hmacKeyImports()).toBe(before + 1);
  });
});

describe("the Stripe webhook secret's HMAC key", () => {
  it("computes the SDK's sample signatures (stripe's esm/crypto/CryptoProvider.d.ts)", async () => {
    // The values stripe-node documents for every CryptoProvider implementation.
    expect(await cryptoProvider.computeHMACSignatureAsync("", "test_secret")).toBe(
      "f7f9bd47fb987337b5796fdc1fdb9ba221d0d5396814bfcaf9521f43fd8927fd",
    );
    expect(await cryptoProvider.computeHMACSignatureAsync("\ud83d\ude00", "test_secret")).toBe(
      "837da296d05c4fe31f61d5d7ead035099d9585a5bcde87de952012a78f0b0c43",
    );
  });

  it("is imported once per secret, not per event, and a wrong secret still fails", async () => {
    const event = stripeEvent("customer.created", { id: unique("cus"), object: "customer" });
    const { body, headers } = await signedStripe(event);
    const signature = headers["stripe-signature"];
    await verifyStripe(body, signature, TEST_SECRETS.STRIPE_WEBHOOK_SECRET);
    const before = stripeKeyImports();
    const verified = await Promise.all(
      Array.from({ length: 20 }, () =>
        verifyStripe(body, signature, TEST_SECRETS.STRIPE_WEBHOOK_SECRET),
      ),
    );
    expect(verified.every((e) => e.id === event.id)).toBe(true);
    expect(stripeKeyImports()).toBe(before);
    // A rotated secret is one more import; the event signed with the old one fails under it.
    await expect(verifyStripe(body, signature, "whsec_rotated")).rejects.toMatchObject({
      status: 400,
    });
    await expect(verifyStripe(body, signature, "whsec_rotated")).rejects.toMatchObject({
      status: 400,
    });
    expect(stripeKeyImports()).toBe(before + 1);
  });
});
