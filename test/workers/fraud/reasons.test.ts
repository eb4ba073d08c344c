// Reason codes inside workerd: the real INT8 model's attributions sum to score − baseline,
// explaining never changes a score, the same input gives the same reasons, and a webhook's
// decision carries its reasons into the card's view and the D1 copy.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import windows from "../../fixtures/fraud-gru/windows.json";
import { RawRowSchema, toTransactionInput } from "../../support/tabformer";
import {
  BASE,
  deliverStripe,
  issuingAuthorization,
  storedDecisions,
  stripeEvent,
  T0,
  unique,
} from "../../support/workers/fraud";
import { KEY, post } from "../../support/workers/helpers";

const { histories } = z
  .object({ histories: z.array(z.object({ transactions: z.array(RawRowSchema) })) })
  .parse(windows);
const accounts = histories.map((history) => {
  const all = history.transactions.map((raw, i) => toTransactionInput(raw, `t${i}`));
  return { history: all.slice(0, -1), transaction: all.at(-1)! };
});

interface Explained {
  score: number;
  reasons: { code: string; text: string; contribution: number }[];
  contributions: Record<string, number>;
  baseline_score: number;
}

async function score(explain: boolean) {
  const response = await post("/v1/fraud/score", { accounts, explain });
  expect(response.status).toBe(200);
  return (await response.json<{ results: Explained[] }>()).results;
}

describe("reason codes", () => {
  it("add up to score − baseline within 1e-6 and leave every score as it was", async () => {
    const [plain, explained] = [await score(false), await score(true)];
    explained.forEach((result, i) => {
      expect(Math.abs(result.score - plain[i]!.score)).toBeLessThanOrEqual(1e-6);
      const sum = Object.values(result.contributions).reduce((a, b) => a + b, 0);
      expect(Object.keys(result.contributions)).toHaveLength(7);
      expect(Math.abs(sum - (result.score - result.baseline_score))).toBeLessThanOrEqual(1e-6);
      const shown = result.reasons.map((reason) => reason.contribution);
      expect(shown).toEqual(shown.toSorted((a, b) => b - a));
      expect(result.reasons.length).toBeLessThanOrEqual(3);
      for (const reason of result.reasons) expect(reason.contribution).toBeGreaterThan(0);
    });
    expect(explained.some((result) => result.reasons.length > 0)).toBe(true);
  });

  it("are deterministic: the same accounts give the same reasons and contributions", async () => {
    expect(await score(true)).toEqual(await score(true));
  });

  it("are stored with a webhook's decision and shown by GET /v1/fraud/cards/{card}", async () => {
    const card = unique("ic");
    // A burst of tiny card-not-present charges at new merchants, then a large one.
    for (let i = 0; i < 6; i++) {
      const authorization = issuingAuthorization(card, {
        created: T0 + i * 120,
        amount: 50 + i,
        network_id: String(1000 + i),
      });
      authorization.authorization_method = "online";
      expect(
        (await deliverStripe(stripeEvent("issuing_authorization.request", authorization))).status,
      ).toBe(200);
    }
    const view = await (
      await SELF.fetch(`${BASE}/v1/fraud/cards/${card}`, {
        headers: { authorization: `Bearer ${KEY}` },
      })
    ).json<{ decisions: (Explained & { transactionKey: string; baselineScore: number })[] }>();
    expect(view.decisions).toHaveLength(6);
    for (const decision of view.decisions) {
      expect(Array.isArray(decision.reasons)).toBe(true);
      expect(typeof decision.baselineScore).toBe("number");
    }
    const last = view.decisions.at(-1)!;
    const stored = await storedDecisions(card);
    const copy = stored.find((row) => row.transaction_key === last.transactionKey);
    expect(JSON.parse(String(copy?.reasons))).toEqual(last.reasons);
  });
});
