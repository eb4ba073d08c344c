// One Durable Object per card: its recent transactions in SQLite, strongly consistent, so
// a transaction is scored against exactly the history before it and appended once.
import { DurableObject } from "cloudflare:workers";
import type { Transaction } from "../tasks/fraud/transaction";

/** Transactions kept per card; far more than the model's window, for late (out-of-order) events. */
const KEEP = 64;

export class CardHistory extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS transactions (
      event_id TEXT PRIMARY KEY,
      at INTEGER NOT NULL,
      body TEXT NOT NULL
    )`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS transactions_at ON transactions (at, event_id)");
  }

  /** Up to `size` transactions before `at` (oldest first), never the event itself. */
  history(eventId: string, at: number, size: number): Transaction[] {
    const rows = this.sql
      .exec<{ body: string }>(
        `SELECT body FROM transactions WHERE event_id != ? AND (at < ? OR (at = ? AND event_id < ?))
         ORDER BY at DESC, event_id DESC LIMIT ?`,
        eventId, at, at, eventId, size,
      )
      .toArray();
    return rows.reverse().map((row) => JSON.parse(row.body) as Transaction);
  }

  /** Appends a transaction unless its event is already here; true when it was new. */
  append(eventId: string, transaction: Transaction): boolean {
    const inserted = this.sql.exec(
      "INSERT INTO transactions (event_id, at, body) VALUES (?, ?, ?) ON CONFLICT (event_id) DO NOTHING",
      eventId, transaction.timestamp, JSON.stringify(transaction),
    ).rowsWritten > 0;
    if (inserted) {
      this.sql.exec(
        "DELETE FROM transactions WHERE event_id NOT IN (SELECT event_id FROM transactions ORDER BY at DESC, event_id DESC LIMIT ?)",
        KEEP,
      );
    }
    return inserted;
  }

  /** Every stored transaction, oldest first (operators and tests). */
  list(): Transaction[] {
    return this.sql
      .exec<{ body: string }>("SELECT body FROM transactions ORDER BY at, event_id")
      .toArray()
      .map((row) => JSON.parse(row.body) as Transaction);
  }
}

/** The HistoryStore of the fraud task: one CardHistory object per card id. */
export function durableHistories(namespace: DurableObjectNamespace<CardHistory>) {
  const stub = (cardId: string) => namespace.get(namespace.idFromName(cardId));
  return {
    history: (cardId: string, eventId: string, at: number, size: number) => stub(cardId).history(eventId, at, size),
    append: (cardId: string, eventId: string, transaction: Transaction) => stub(cardId).append(eventId, transaction),
  };
}
