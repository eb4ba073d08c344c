// A fraud decision: one per payment (keyed on the provider's transaction id), made inside the
// card's Durable Object together with its history entry, and copied into D1 from an outbox.
export interface Decision {
  /** `stripe:ch_…`, `stripe:iauth_…`, `adyen:<pspReference>`: one decision per payment. */
  transactionKey: string;
  /** The event that was decided first; later events of the same payment read this decision back. */
  eventId: string;
  provider: "stripe" | "adyen" | "api";
  eventType: string;
  transactionId: string;
  cardId: string;
  score: number;
  label: "LEGIT" | "SUSPECT" | "FRAUD";
  /**
   * Whether the payment goes through: our decision (Issuing), or the provider's (notifications).
   */
  approved: boolean;
  decidedBy: "model" | "provider";
  model: string;
  modelVersion: string;
  historyLength: number;
  transactionAt: string;
  decidedAt: string;
}

/** Every event delivery that reached a decided payment (the first one and the later ones). */
export interface DecisionEvent {
  eventId: string;
  transactionKey: string;
  provider: Decision["provider"];
  eventType: string;
  receivedAt: string;
}

/** What the Durable Object's outbox carries into D1. */
export type OutboxEntry =
  | { kind: "decision"; decision: Decision }
  | { kind: "event"; event: DecisionEvent };

function statementFor(db: D1Database, entry: OutboxEntry): D1PreparedStatement {
  if (entry.kind === "event") {
    const { event } = entry;
    return db
      .prepare(
        `INSERT INTO decision_events (event_id, transaction_key, provider, event_type, received_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
      )
      .bind(event.eventId, event.transactionKey, event.provider, event.eventType, event.receivedAt);
  }
  const { decision: d } = entry;
  return db
    .prepare(
      "INSERT INTO decisions (transaction_key, event_id, provider, event_type, transaction_id, " +
        `card_id, score, label, approved,
         decided_by, model, model_version, history_length, transaction_at, decided_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
        "ON CONFLICT (transaction_key) DO NOTHING",
    )
    .bind(
      d.transactionKey,
      d.eventId,
      d.provider,
      d.eventType,
      d.transactionId,
      d.cardId,
      d.score,
      d.label,
      d.approved ? 1 : 0,
      d.decidedBy,
      d.model,
      d.modelVersion,
      d.historyLength,
      d.transactionAt,
      d.decidedAt,
    );
}

/**
 * Copies outbox entries into D1 in one batch; idempotent, so a replay after a crash is harmless.
 */
export async function copyToD1(db: D1Database, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.batch(entries.map((entry) => statementFor(db, entry)));
}
