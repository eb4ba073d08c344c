// GET /v1/fraud/export inside workerd: decided payments with their outcome labels as the
// trainer's TabFormer CSV, per card in time order, Is Fraud? from the payment's outcomes.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  BASE,
  deliverStripe,
  storedDecisions,
  stripeEvent,
  T0,
  unique,
} from "../../support/workers/fraud";
import { KEY } from "../../support/workers/helpers";

describe("GET /v1/fraud/export", () => {
  it("writes the trainer's CSV with Is Fraud? from the outcomes", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const fingerprint = unique("fp");
    const ids = [unique("ch"), unique("ch")];
    // Delivered newest first: the export orders them by transaction time.
    for (const [i, id] of [...ids.entries()].reverse()) {
      const charge = {
        id,
        object: "charge",
        created: T0 + i * 3600,
        amount: 1_999 + i,
        currency: "usd",
        status: "succeeded",
        payment_method_details: { type: "card", card: { fingerprint } },
      };
      expect((await deliverStripe(stripeEvent("charge.succeeded", charge))).status).toBe(200);
    }
    const warning = {
      id: unique("issfr"),
      charge: ids[1],
      created: T0 + 7200,
      fraud_type: "made_with_stolen_card",
    };
    await deliverStripe(stripeEvent("radar.early_fraud_warning.created", warning));
    await storedDecisions(`fingerprint:${fingerprint}`);
    const response = await SELF.fetch(
      `${BASE}/v1/fraud/export?since=${encodeURIComponent(since)}`,
      { headers: { authorization: `Bearer ${KEY}` } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/csv");
    const lines = (await response.text()).trimEnd().split("\n");
    expect(lines[0]).toBe(
      "User,Card,Year,Month,Day,Time,Amount,Use Chip,Merchant Name,Merchant City," +
        "Merchant State,Zip,MCC,Errors?,Is Fraud?",
    );
    const mine = lines.filter((line) => line.startsWith(`fingerprint:${fingerprint},`));
    expect(mine).toHaveLength(2);
    expect(mine[0]).toMatch(
      /^fingerprint:[^,]+,0,2019,10,1,12:00,\$19\.99,Online Transaction,.*,No$/,
    );
    expect(mine[1]).toMatch(/,2019,10,1,13:00,\$20\.00,.*,Yes$/);
  });
});
