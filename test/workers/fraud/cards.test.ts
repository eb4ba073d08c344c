// GET /v1/fraud/cards/{card}: an operator's view of a card's stored history and decisions.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TEST_SECRETS } from "../../support/secrets";
import { BASE, deliverStripe, stripeEvent, T0, unique } from "../../support/workers/fraud";

const auth = { authorization: `Bearer ${TEST_SECRETS.API_KEYS.split(",")[0]}` };
const cardUrl = (card: string) => `${BASE}/v1/fraud/cards/${encodeURIComponent(card)}`;

describe("GET /v1/fraud/cards/{card}", () => {
  it("returns the card's history, decisions and the deliveries that reached them", async () => {
    const fingerprint = unique("fp");
    const charge = {
      id: unique("ch"),
      created: T0,
      amount: 2_500,
      currency: "usd",
      payment_method_details: { card: { fingerprint } },
    };
    await deliverStripe(stripeEvent("charge.succeeded", charge));
    await deliverStripe(stripeEvent("charge.captured", charge));
    const response = await SELF.fetch(cardUrl(`fingerprint:${fingerprint}`), { headers: auth });
    expect(response.status).toBe(200);
    const body = await response.json<{
      history: unknown[];
      decisions: unknown[];
      events: unknown[];
    }>();
    expect(body).toMatchObject({
      card_id: `fingerprint:${fingerprint}`,
      history: [
        { id: charge.id, timestamp: "2019-10-01T12:00:00.000Z", amount: 25, currency: "USD" },
      ],
      decisions: [{ transactionKey: `stripe:${charge.id}`, eventType: "charge.succeeded" }],
    });
    expect(body.events).toHaveLength(2);
  });

  it("404 for a card with nothing stored", async () => {
    const response = await SELF.fetch(cardUrl(unique("nobody")), { headers: auth });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "not_found", field: "card" });
  });

  it("401 without a key (card histories are not public)", async () => {
    const response = await SELF.fetch(cardUrl("fingerprint:x"));
    expect(response.status).toBe(401);
  });

  it("400 for a card id over 255 characters", async () => {
    const response = await SELF.fetch(cardUrl("x".repeat(256)), { headers: auth });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ field: "card" });
  });
});

describe("the OpenAPI document", () => {
  it("documents the card route and both webhooks with every status they answer", async () => {
    const document = await (await SELF.fetch(`${BASE}/openapi.json`)).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>();
    expect(Object.keys(document.paths["/v1/fraud/cards/{card}"]?.get?.responses ?? {})).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "429",
    ]);
    expect(
      Object.keys(document.paths["/v1/webhooks/stripe"]?.post?.responses ?? {}).sort(),
    ).toEqual(["200", "400", "413", "415", "500", "503"]);
    expect(Object.keys(document.paths["/v1/webhooks/adyen"]?.post?.responses ?? {}).sort()).toEqual(
      ["200", "400", "401", "413", "415", "500", "503"],
    );
  });
});
