// One Durable Object per card: its recent transactions, its decisions and the event ids that
// reached them, in SQLite, copied to D1 through an outbox.
import { DurableObject } from "cloudflare:workers";
import type { Transaction } from "../transaction";
import { createCardSchema } from "./card-schema";
import { copyToD1, type Decision, type DecisionEvent, type OutboxEntry } from "./decisions";
import type { CardLedger, CardView, Committed, Delivery, Prepared } from "./ledger";

/** Transactions kept per card; far more than the model's window, for late (out-of-order) events. */
const KEEP = 64;
/** How soon the outbox is replayed into D1 again after a failed copy. */
const RETRY_MS = 10_000;

/** Where a test's fault hook aborts a commit (never set in production: see `faultAfter`). */
export type FaultPoint = "event" | "history" | "decision";

/**
 * The idempotency key, the history append and the decision are one transaction (transactionSync):
 * after any crash there is both or neither, and of concurrent deliveries of one payment exactly one
 * is first.
 */
export class CardHistory extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Test-only fault hook: tests set it through runInDurableObject; nothing else can reach it. */
  faultAfter: FaultPoint | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    createCardSchema(this.sql);
  }

  /**
   * The payment's decision if it has one (recording this delivery), else the history to score it
   * against.
   */
  async prepare(delivery: Delivery, at: number, size: number): Promise<Prepared> {
    const decided = this.ctx.storage.transactionSync(() => {
      const existing = this.decision(delivery.transactionKey);
      if (existing !== undefined) this.recordEvent(delivery);
      return existing;
    });
    if (decided !== undefined) {
      await this.flush();
      return { decided };
    }
    return { history: this.history(delivery.transactionKey, at, size), version: this.version() };
  }

  /**
   * Stores the event id, the history entry and the decision in one transaction, unless the
   * payment was decided meanwhile (that decision is returned, `duplicate: true`) or the history
   * changed since `version` (`stale`: score again). `version: null` commits regardless.
   */
  async commit(
    delivery: Delivery,
    transaction: Transaction,
    decision: Decision,
    version: number | null,
  ): Promise<Committed> {
    const committed = this.ctx.storage.transactionSync((): Committed => {
      const existing = this.decision(delivery.transactionKey);
      if (existing !== undefined) {
        this.recordEvent(delivery);
        return { decision: existing, duplicate: true };
      }
      if (version !== null && version !== this.version()) return { stale: true };
      this.recordEvent(delivery);
      this.fault("event");
      this.sql.exec(
        "INSERT INTO history (transaction_key, at, body) VALUES (?, ?, ?)",
        delivery.transactionKey,
        transaction.timestamp,
        JSON.stringify(transaction),
      );
      this.fault("history");
      this.sql.exec(
        "INSERT INTO decisions (transaction_key, at, body) VALUES (?, ?, ?)",
        delivery.transactionKey,
        transaction.timestamp,
        JSON.stringify(decision),
      );
      this.fault("decision");
      this.enqueue({ kind: "decision", decision });
      this.sql.exec(
        "DELETE FROM history WHERE transaction_key NOT IN (SELECT transaction_key " +
          "FROM history ORDER BY at DESC, transaction_key DESC LIMIT ?)",
        KEEP,
      );
      return { decision, duplicate: false };
    });
    if (!("stale" in committed)) await this.flush();
    return committed;
  }

  /** History, decisions and deliveries of this card, oldest first (operators and tests). */
  async view(): Promise<CardView> {
    await this.flush();
    const bodies = (query: string) =>
      this.sql
        .exec<{ body: string }>(query)
        .toArray()
        .map((row) => row.body);
    return {
      history: bodies("SELECT body FROM history ORDER BY at, transaction_key").map(
        (body) => JSON.parse(body) as Transaction,
      ),
      decisions: bodies("SELECT body FROM decisions ORDER BY at, transaction_key").map(
        (body) => JSON.parse(body) as Decision,
      ),
      events: bodies("SELECT body FROM events ORDER BY rowid").map(
        (body) => JSON.parse(body) as DecisionEvent,
      ),
    };
  }

  /** Replays the outbox into D1; an alarm retries while D1 cannot take it. */
  override async alarm(): Promise<void> {
    await this.flush();
  }

  private async flush(): Promise<void> {
    const rows = this.sql
      .exec<{ seq: number; body: string }>("SELECT seq, body FROM outbox ORDER BY seq LIMIT 100")
      .toArray();
    const last = rows.at(-1);
    if (last === undefined) return;
    // Before the copy: if it fails, or the process dies, the alarm replays the outbox.
    await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
    try {
      await copyToD1(
        this.env.DB,
        rows.map((row) => JSON.parse(row.body) as OutboxEntry),
      );
    } catch (error) {
      console.warn(
        `D1 copy of ${rows.length} outbox entries failed; retrying in ${RETRY_MS} ms`,
        error,
      );
      return;
    }
    this.sql.exec("DELETE FROM outbox WHERE seq <= ?", last.seq);
    const left = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
    if (left === 0) await this.ctx.storage.deleteAlarm();
    else await this.flush();
  }

  private decision(transactionKey: string): Decision | undefined {
    const row = this.sql
      .exec<{ body: string }>(
        "SELECT body FROM decisions WHERE transaction_key = ?",
        transactionKey,
      )
      .toArray()[0];
    return row === undefined ? undefined : (JSON.parse(row.body) as Decision);
  }

  /** Up to `size` transactions before `at` (oldest first), never the payment itself. */
  private history(transactionKey: string, at: number, size: number): Transaction[] {
    const rows = this.sql
      .exec<{ body: string }>(
        "SELECT body FROM history WHERE transaction_key != ? AND " +
          `(at < ? OR (at = ? AND transaction_key < ?))
         ORDER BY at DESC, transaction_key DESC LIMIT ?`,
        transactionKey,
        at,
        at,
        transactionKey,
        size,
      )
      .toArray();
    return rows.reverse().map((row) => JSON.parse(row.body) as Transaction);
  }

  /** Changes whenever a history entry is added (rowids only grow; pruning removes the oldest). */
  private version(): number {
    return this.sql.exec<{ v: number }>("SELECT coalesce(max(rowid), 0) AS v FROM history").one().v;
  }

  private recordEvent(delivery: Delivery): void {
    const event: DecisionEvent = {
      eventId: delivery.eventId,
      transactionKey: delivery.transactionKey,
      provider: delivery.provider,
      eventType: delivery.eventType,
      receivedAt: new Date().toISOString(),
    };
    const inserted = this.sql.exec(
      "INSERT INTO events (event_id, transaction_key, body) " +
        "VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING",
      event.eventId,
      event.transactionKey,
      JSON.stringify(event),
    ).rowsWritten;
    if (inserted > 0) this.enqueue({ kind: "event", event });
  }

  private enqueue(entry: OutboxEntry): void {
    this.sql.exec("INSERT INTO outbox (body) VALUES (?)", JSON.stringify(entry));
  }

  private fault(point: FaultPoint): void {
    if (this.faultAfter === point) throw new Error(`fault injected after the ${point} write`);
  }
}

/** The card ledger of the fraud task: one CardHistory object per card id. */
export function durableCards(namespace: DurableObjectNamespace<CardHistory>): CardLedger {
  const stub = (cardId: string) => namespace.get(namespace.idFromName(cardId));
  return {
    prepare: (cardId: string, delivery: Delivery, at: number, size: number) =>
      stub(cardId).prepare(delivery, at, size),
    commit: (
      cardId: string,
      delivery: Delivery,
      transaction: Transaction,
      decision: Decision,
      version: number | null,
    ) => stub(cardId).commit(delivery, transaction, decision, version),
    view: (cardId: string) => stub(cardId).view(),
  };
}
