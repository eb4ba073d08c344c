// The D1 copy of a card's outbox, column by column: each decision's row in D1 holds what the
// card's Durable Object stored (JSON true as 1, arrays and objects as their JSON text), and each
// delivery of the payment, the first and a later one, has its row in decision_events.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  cardView,
  deliverStripe,
  issuingAuthorization,
  storedDecisions,
  stripeEvent,
  T0,
  unique,
} from "../../support/workers/fraud";

describe("the D1 copy", () => {
  it("holds every column of the object's decisions and every delivery", async () => {
    const card = unique("ic");
    const authorizations = [0, 1].map((i) =>
      issuingAuthorization(card, { created: T0 + i * 600, amount: 1_000 + i * 250_000 }),
    );
    for (const authorization of authorizations) {
      const response = await deliverStripe(
        stripeEvent("issuing_authorization.request", authorization),
      );
      expect(response.status).toBe(200);
    }
    // A later event of the first payment: no new decision, one more delivery.
    const later = stripeEvent("issuing_authorization.created", {
      ...authorizations[0],
      approved: true,
      status: "pending",
    });
    expect((await deliverStripe(later)).status).toBe(200);

    const rows = await storedDecisions(card); // replays the outbox into D1 first
    const { decisions, events } = await cardView(card);
    expect(decisions).toHaveLength(2);
    expect(events).toHaveLength(3);
    const json = (value: unknown) => (value === null ? undefined : JSON.parse(String(value)));
    expect(
      rows.map((row) => ({
        transactionKey: row.transaction_key,
        eventId: row.event_id,
        provider: row.provider,
        eventType: row.event_type,
        transactionId: row.transaction_id,
        cardId: row.card_id,
        score: row.score,
        label: row.label,
        approved: row.approved,
        decidedBy: row.decided_by,
        model: row.model,
        modelVersion: row.model_version,
        historyLength: row.history_length,
        transactionAt: row.transaction_at,
        decidedAt: row.decided_at,
        reasons: json(row.reasons),
        rulesTriggered: json(row.rules_triggered),
        ruleInputs: json(row.rule_inputs),
      })),
    ).toEqual(
      decisions.map(({ baselineScore: _, ruleAction: __, ...decision }) => ({
        ...decision,
        approved: decision.approved ? 1 : 0,
      })),
    );
    // Both decisions went through: the row reads 1, not the JSON text "true".
    expect(rows.map((row) => row.approved)).toEqual([1, 1]);

    const { results } = await env.DB.prepare(
      "SELECT event_id, transaction_key, provider, event_type, received_at " +
        "FROM decision_events WHERE transaction_key IN (?, ?) ORDER BY received_at, event_id",
    )
      .bind(...decisions.map((decision) => decision.transactionKey))
      .all();
    expect(results).toEqual(
      events
        .map((event) => ({
          event_id: event.eventId,
          transaction_key: event.transactionKey,
          provider: event.provider,
          event_type: event.eventType,
          received_at: event.receivedAt,
        }))
        .sort((a, b) =>
          a.received_at === b.received_at
            ? a.event_id.localeCompare(b.event_id)
            : a.received_at.localeCompare(b.received_at),
        ),
    );
    expect(results.map((row) => row.event_type)).toContain("issuing_authorization.created");
  });
});
