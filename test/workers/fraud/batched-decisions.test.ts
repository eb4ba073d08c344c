// Decisions of several cards at once, inside workerd: their Durable Objects share the isolate's
// model, so the windows explained in one turn run as one batch of the attribution graph, and
// every decision (score, label, reasons, contributions) is what the same payment gets alone.
import { describe, expect, it } from "vitest";
import {
  cardView,
  deliverStripe,
  issuingAuthorization,
  stripeEvent,
  T0,
  unique,
} from "../../support/workers/fraud";
import { get } from "../../support/workers/helpers";

const CARDS = 12;

/** The explain batcher's runs and calls so far in this isolate (GET /metrics). */
async function batches() {
  const text = await (await get("/metrics")).text();
  const counter = (name: string) =>
    Number(
      text.match(new RegExp(`^${name}\\{batcher="fraud-gru\\.explain"\\} (\\d+)$`, "m"))?.[1] ?? 0,
    );
  return { runs: counter("edge_batch_runs_total"), calls: counter("edge_batch_calls_total") };
}

/** Payment i: each its own amount, entry method and merchant, on a card of its own. */
function payment(i: number) {
  const authorization = issuingAuthorization(unique("bc"), {
    created: T0 + i * 3_600,
    amount: 300 + i * 17_000,
    network_id: String(7_000 + i),
  });
  if (i % 3 === 0) authorization.authorization_method = "online";
  return authorization;
}

/** Delivers each payment and returns its card's stored decision. */
async function decide(authorizations: ReturnType<typeof payment>[], together: boolean) {
  const deliver = async (authorization: ReturnType<typeof payment>) => {
    const response = await deliverStripe(
      stripeEvent("issuing_authorization.request", authorization),
    );
    expect(response.status).toBe(200);
  };
  if (together) await Promise.all(authorizations.map(deliver));
  else for (const authorization of authorizations) await deliver(authorization);
  return Promise.all(
    authorizations.map(async (authorization) => {
      const view = await cardView(authorization.card.id);
      expect(view.decisions).toHaveLength(1);
      const { score, label, reasons, baselineScore, historyLength } = view.decisions[0]!;
      return { score, label, reasons, baselineScore, historyLength };
    }),
  );
}

describe("decisions of several cards at once", () => {
  it("run as batches of the attribution graph and decide as each payment alone would", async () => {
    const before = await batches();
    const together = await decide(
      Array.from({ length: CARDS }, (_, i) => payment(i)),
      true,
    );
    const during = await batches();
    const alone = await decide(
      Array.from({ length: CARDS }, (_, i) => payment(i)),
      false,
    );
    const after = await batches();

    expect(during.calls - before.calls).toBe(CARDS);
    expect(during.runs - before.runs).toBeLessThan(CARDS);
    // One at a time, each decision is a batch of one.
    expect(after.calls - during.calls).toBe(CARDS);
    expect(after.runs - during.runs).toBe(CARDS);

    expect(together).toEqual(alone);
    expect(new Set(together.map(({ score }) => score)).size).toBeGreaterThan(CARDS / 2);
  });
});
