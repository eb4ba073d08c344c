// Rules on top of the model inside workerd: written through the admin API (versioned, CEL
// checked, 400 naming the field), applied in the same decision (an Issuing authorization
// declined by a rule, the rule recorded in rulesTriggered), and backtested over stored
// decisions with their outcomes. Each rule here targets this file's own cards only.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  BASE,
  cardView,
  deliverStripe,
  issuingAuthorization,
  storedDecisions,
  stripeEvent,
  T0,
  unique,
} from "../../support/workers/fraud";
import { KEY } from "../../support/workers/helpers";

const call = (method: string, path: string, body?: unknown) =>
  SELF.fetch(`${BASE}/v1/fraud${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe("fraud rules", () => {
  it("are versioned: each PUT stores the next version, GET lists the current one", async () => {
    const id = unique("rule").toLowerCase();
    const body = { expression: 'card.id == "nobody"', action: "review", order: 5 };
    expect(await (await call("PUT", `/rules/${id}`, body)).json()).toMatchObject({
      id,
      version: 1,
      enabled: true,
    });
    const second = await call("PUT", `/rules/${id}`, { ...body, enabled: false });
    expect(await second.json()).toMatchObject({ version: 2, enabled: false });
    const { rules } = await (await call("GET", "/rules")).json<{ rules: { id: string }[] }>();
    expect(rules.filter((rule) => rule.id === id)).toEqual([
      expect.objectContaining({ version: 2, enabled: false, order: 5 }),
    ]);
  });

  it("refuses a rule that is not a bool CEL condition, naming the field", async () => {
    const response = await call("PUT", "/rules/bad-rule", {
      expression: "transaction.amount + 1.0",
      action: "block",
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(await response.json()).toMatchObject({ field: "expression" });
    const unknown = await call("PUT", "/rules/bad-rule", {
      expression: "true",
      action: "delete",
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ field: "action" });
  });

  it("applies in the decision: a declining rule answers an Issuing authorization", async () => {
    const card = unique("ic");
    const id = unique("decline").toLowerCase();
    await call("PUT", `/rules/${id}`, {
      expression: `card.id == "${card}" && transaction.amount > 100.0`,
      action: "decline",
      order: 1,
    });
    try {
      const small = issuingAuthorization(card, { amount: 2_500 });
      const big = issuingAuthorization(card, { amount: 250_000, created: T0 + 60 });
      const answers = [];
      for (const authorization of [small, big]) {
        const response = await deliverStripe(
          stripeEvent("issuing_authorization.request", authorization),
        );
        answers.push(await response.json<{ approved: boolean }>());
      }
      expect(answers[1]).toMatchObject({ approved: false });
      const { decisions } = await cardView(card);
      expect(decisions[0]?.rulesTriggered).toEqual([]);
      expect(decisions[1]).toMatchObject({
        approved: false,
        ruleAction: "decline",
        rulesTriggered: [{ id, version: 1, action: "decline" }],
      });
      expect(decisions[1]?.ruleInputs?.card.id).toBe(card);
    } finally {
      await call("PUT", `/rules/${id}`, { expression: "false", action: "decline", enabled: false });
    }
  });

  it("backtests a draft over stored decisions with the outcomes known for them", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const fingerprint = unique("fp");
    const chargeIds = [unique("ch"), unique("ch")];
    for (const [i, id] of chargeIds.entries()) {
      const charge = {
        id,
        object: "charge",
        created: T0 + i * 60,
        amount: 1_000 + i,
        currency: "usd",
        status: "succeeded",
        payment_method_details: { type: "card", card: { fingerprint } },
      };
      expect((await deliverStripe(stripeEvent("charge.succeeded", charge))).status).toBe(200);
    }
    const warning = {
      id: unique("issfr"),
      object: "radar.early_fraud_warning",
      actionable: true,
      charge: chargeIds[1],
      created: T0 + 3600,
      fraud_type: "made_with_stolen_card",
      livemode: false,
    };
    await deliverStripe(stripeEvent("radar.early_fraud_warning.created", warning));
    await storedDecisions(`fingerprint:${fingerprint}`); // the D1 copy, replayed now
    const response = await call("POST", "/rules/backtest", {
      expression: `card.id == "fingerprint:${fingerprint}"`,
      since,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      hits: 2,
      hits_labelled: 1,
      hits_fraudulent: 1,
      truncated: false,
    });
    const narrower = await call("POST", "/rules/backtest", {
      expression: `card.id == "fingerprint:${fingerprint}" && transaction.amount < 10.005`,
      since,
    });
    expect(await narrower.json()).toMatchObject({ hits: 1, hits_fraudulent: 0 });
  });
});
