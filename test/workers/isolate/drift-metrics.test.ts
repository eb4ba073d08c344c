// /metrics raising the fraud drift signal when a shifted week of decisions is injected into D1.
// In a fresh isolate (vitest.config.ts, FRESH_ISOLATE): /metrics keeps its drift report for
// 5 minutes per isolate, so a report read earlier by another file would hide the injected week.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BASE } from "../../support/workers/fraud";
import { KEY } from "../../support/workers/helpers";

/** `n` decisions of the last hour, every one a large online payment with no card history. */
async function injectShiftedDecisions(n: number): Promise<void> {
  const at = new Date(Date.now() - 60 * 60_000).toISOString();
  const inputs = JSON.stringify({
    transaction: { amount: 4_000, currency: "USD", method: "online", mcc: "5732", hour: 3 },
    card: { history_count: 0 },
    score: 0.02,
    label: "LEGIT",
    provider: "stripe",
  });
  const insert = env.DB.prepare(
    "INSERT INTO decisions (transaction_key, event_id, provider, event_type, transaction_id, " +
      "card_id, score, label, approved, decided_by, model, model_version, history_length, " +
      "transaction_at, decided_at, rule_inputs) VALUES (?, ?, 'stripe', 'charge.succeeded', ?, " +
      "'card_shift', 0.02, 'LEGIT', 1, 'model', 'fraud-gru', '1', 0, ?, ?, ?)",
  );
  await env.DB.batch(
    Array.from({ length: n }, (_, i) =>
      insert.bind(`stripe:ch_shift_${i}`, `evt_shift_${i}`, `ch_shift_${i}`, at, at, inputs),
    ),
  );
}

describe("the drift signal on /metrics", () => {
  it("is raised by a shifted week of decisions, naming the features that moved", async () => {
    await injectShiftedDecisions(150);
    const response = await SELF.fetch(`${BASE}/metrics`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const labels = 'model="fraud-gru",window="7d"';
    const psi = (feature: string) =>
      Number(
        new RegExp(`^edge_fraud_drift_psi\\{feature="${feature}",${labels}\\} (.+)$`, "m").exec(
          text,
        )?.[1],
      );
    expect(text).toContain(`edge_fraud_drift{${labels}} 1`);
    expect(text).toContain(`edge_fraud_drift_sample{${labels}} 150`);
    // Amounts of 4,000, every one online, all at 3 a.m.: far from the training world.
    for (const feature of ["log_amount", "method", "hour"])
      expect(psi(feature)).toBeGreaterThanOrEqual(0.25);
  });
});
