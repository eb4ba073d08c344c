// Atomic decisions: the event id, the history entry and the decision are one transaction of
// the card's Durable Object. A fault hook (test-only: an instance field nothing in production
// sets) aborts the commit between the writes; ten concurrent deliveries of one event have
// exactly one first.
import { env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { FaultPoint } from "../../../src/tasks/fraud/ledger/card-history";
import { createCardSchema } from "../../../src/tasks/fraud/ledger/card-schema";
import { TEST_SECRETS } from "../../support/secrets";
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

const stubOf = (card: string) => env.CARD_HISTORY.get(env.CARD_HISTORY.idFromName(card));

function charge(fingerprint: string, created = T0) {
  return {
    id: unique("ch"),
    object: "charge",
    created,
    amount: 4_200,
    currency: "usd",
    status: "succeeded",
    payment_method_details: { type: "card", card: { fingerprint } },
  };
}

beforeAll(async () => {
  await SELF.fetch(`${BASE}/v2/models/fraud-gru/ready`, {
    headers: { authorization: `Bearer ${TEST_SECRETS.API_KEYS.split(",")[0]}` },
  });
}, 120_000);

describe("atomic decisions in the card's Durable Object", () => {
  it.each<FaultPoint>(["event", "history", "decision"])(
    "a commit aborted after the %s write leaves neither " +
      "history nor decision; the retry records both once",
    async (point) => {
      const fingerprint = unique("fp");
      const card = `fingerprint:${fingerprint}`;
      const event = stripeEvent("charge.succeeded", charge(fingerprint));
      await runInDurableObject(stubOf(card), (instance) => {
        instance.faultAfter = point;
      });
      const failed = await deliverStripe(event);
      expect(failed.status).toBe(500);
      const orphaned = await cardView(card);
      expect(orphaned).toEqual({ history: [], decisions: [], events: [] });
      expect(await storedDecisions(card)).toHaveLength(0);

      await runInDurableObject(stubOf(card), (instance) => {
        instance.faultAfter = undefined;
      });
      const retried = await deliverStripe(event);
      expect(retried.status).toBe(200);
      expect(await retried.json()).toMatchObject({ scored: true, duplicate: false });
      const view = await cardView(card);
      expect(view.history).toHaveLength(1);
      expect(view.decisions).toHaveLength(1);
      expect(view.events).toHaveLength(1);
      expect(await storedDecisions(card)).toHaveLength(1);
    },
  );

  it(
    "an Issuing authorization aborted mid-commit " +
      "is answered by the policy and leaves no orphan",
    async () => {
      const card = unique("ic");
      await runInDurableObject(stubOf(card), (instance) => {
        instance.faultAfter = "history";
      });
      const response = await deliverStripe(
        stripeEvent("issuing_authorization.request", issuingAuthorization(card)),
      );
      expect(await response.json()).toMatchObject({
        approved: false,
        metadata: { fraud_unscored: expect.stringContaining("fraud decision failed") },
      });
      expect(await cardView(card)).toEqual({ history: [], decisions: [], events: [] });
    },
  );

  it(
    "ten concurrent deliveries of one charge event: " +
      "exactly one is first, all answer the same decision",
    async () => {
      const fingerprint = unique("fp");
      const event = stripeEvent("charge.succeeded", charge(fingerprint));
      const bodies = await Promise.all(
        Array.from({ length: 10 }, async () =>
          (await deliverStripe(event)).json<{ duplicate: boolean; decision: unknown }>(),
        ),
      );
      expect(bodies.filter((body) => !body.duplicate)).toHaveLength(1);
      expect(new Set(bodies.map((body) => JSON.stringify(body.decision))).size).toBe(1);
      const view = await cardView(`fingerprint:${fingerprint}`);
      expect(view.history).toHaveLength(1);
      expect(view.decisions).toHaveLength(1);
    },
  );

  it(
    "ten concurrent deliveries of one charge as different " +
      "events (succeeded, captured, retries): one first",
    async () => {
      const fingerprint = unique("fp");
      const object = charge(fingerprint);
      const events = Array.from({ length: 10 }, (_, i) =>
        stripeEvent(i % 2 === 0 ? "charge.succeeded" : "charge.captured", object),
      );
      const bodies = await Promise.all(
        events.map(async (event) => (await deliverStripe(event)).json<{ duplicate: boolean }>()),
      );
      expect(bodies.filter((body) => !body.duplicate)).toHaveLength(1);
      const view = await cardView(`fingerprint:${fingerprint}`);
      expect(view.history).toHaveLength(1);
      expect(view.events).toHaveLength(10);
    },
  );

  it(
    "concurrent payments of one card: each decided once, " +
      "each scored against a history that was committed",
    async () => {
      const fingerprint = unique("fp");
      const events = Array.from({ length: 8 }, (_, i) =>
        stripeEvent("charge.succeeded", charge(fingerprint, T0 + i * 60)),
      );
      const responses = await Promise.all(events.map((event) => deliverStripe(event)));
      expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
      const view = await cardView(`fingerprint:${fingerprint}`);
      expect(view.history).toHaveLength(8);
      expect(view.decisions).toHaveLength(8);
      // No decision claims more history than existed before its transaction.
      view.decisions.forEach((decision, i) =>
        expect(decision.historyLength).toBeLessThanOrEqual(Math.min(i, 6)),
      );
    },
  );

  it(
    "a card stored before this schema keeps its " +
      "history (the event-keyed table is carried over)",
    async () => {
      const card = unique("legacy");
      const entry = {
        id: "t1",
        card_id: card,
        timestamp: T0 * 1000,
        amount: 1,
        currency: "USD",
        method: "chip",
        merchant: { id: "m", mcc: "5411" },
        errors: [],
      };
      await runInDurableObject(stubOf(card), (_, state) => {
        const sql = state.storage.sql;
        sql.exec(
          "CREATE TABLE transactions (event_id TEXT PRIMARY " +
            "KEY, at INTEGER NOT NULL, body TEXT NOT NULL)",
        );
        sql.exec(
          "INSERT INTO transactions VALUES (?, ?, ?)",
          "evt_old",
          entry.timestamp,
          JSON.stringify(entry),
        );
        createCardSchema(sql);
        expect(
          sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = 'transactions'").one().n,
        ).toBe(0);
      });
      expect((await cardView(card)).history).toEqual([entry]);
    },
  );

  it("copies a decision and its delivery into D1 in the card's alarm, after the answer", async () => {
    const fingerprint = unique("fp");
    const card = `fingerprint:${fingerprint}`;
    const event = stripeEvent("charge.succeeded", charge(fingerprint));
    expect((await deliverStripe(event)).status).toBe(200);
    const copied = () =>
      env.DB.prepare(
        "SELECT (SELECT count(*) FROM decisions WHERE card_id = ?1) AS decisions, " +
          "(SELECT count(*) FROM decision_events WHERE event_id = ?2) AS events",
      )
        .bind(card, event.id)
        .first();
    // Answered before D1 was written: the copy waits in the outbox for the alarm.
    expect(await copied()).toEqual({ decisions: 0, events: 0 });
    expect(await runDurableObjectAlarm(stubOf(card))).toBe(true);
    expect(await copied()).toEqual({ decisions: 1, events: 1 });
    // The copied entry leaves the outbox with the card's next write (here: reading a quiet card).
    await cardView(card);
    const outbox = await runInDurableObject(
      stubOf(card),
      (_, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n,
    );
    expect(outbox).toBe(0);
  });

  it("sets the copy one to two seconds after the commit, a delay of the card's own", async () => {
    // Measured from the commit itself (the delivery's receivedAt, written in the commit's
    // transaction; workerd's clock stands still within it), so how busy the machine is does not
    // enter: a fixed delay would give six equal ones.
    const delays: number[] = [];
    for (let k = 0; k < 6; k++) {
      const fingerprint = unique("fp");
      const card = `fingerprint:${fingerprint}`;
      const response = await deliverStripe(stripeEvent("charge.succeeded", charge(fingerprint)));
      expect(response.status).toBe(200);
      const alarm = await runInDurableObject(stubOf(card), (_, state) => state.storage.getAlarm());
      expect(alarm).not.toBeNull();
      const [delivery] = (await cardView(card)).events;
      const delay = (alarm ?? 0) - Date.parse(delivery?.receivedAt ?? "");
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThan(2000);
      delays.push(delay);
    }
    expect(new Set(delays).size).toBeGreaterThan(1);
  });
});

describe("the outbox", () => {
  it("deletes copied entries in the next commit's own transaction, never before the copy", async () => {
    const fingerprint = unique("fp");
    const card = `fingerprint:${fingerprint}`;
    const count = () =>
      runInDurableObject(
        stubOf(card),
        (_, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n,
      );
    await deliverStripe(stripeEvent("charge.succeeded", charge(fingerprint, T0)));
    expect(await count()).toBe(1);
    await runDurableObjectAlarm(stubOf(card)); // copied, still in the outbox
    expect(await count()).toBe(1);
    await deliverStripe(stripeEvent("charge.succeeded", charge(fingerprint, T0 + 60)));
    expect(await count()).toBe(1); // the first deleted by this commit, which added its own
    expect(await storedDecisions(card)).toHaveLength(2);
  });
});
