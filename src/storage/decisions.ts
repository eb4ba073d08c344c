// Fraud decisions in D1: insert-or-keep on the event id, so a duplicate or replayed event
// always reads back the first decision and never writes a second one.
export interface Decision {
  eventId: string;
  provider: "stripe" | "adyen" | "api";
  eventType: string;
  transactionId: string;
  cardId: string;
  score: number;
  label: "LEGIT" | "SUSPECT" | "FRAUD";
  approved: boolean;
  model: string;
  modelVersion: string;
  historyLength: number;
  transactionAt: string;
  decidedAt: string;
}

interface DecisionRow {
  event_id: string;
  provider: Decision["provider"];
  event_type: string;
  transaction_id: string;
  card_id: string;
  score: number;
  label: Decision["label"];
  approved: number;
  model: string;
  model_version: string;
  history_length: number;
  transaction_at: string;
  decided_at: string;
}

function fromRow(row: DecisionRow): Decision {
  return {
    eventId: row.event_id,
    provider: row.provider,
    eventType: row.event_type,
    transactionId: row.transaction_id,
    cardId: row.card_id,
    score: row.score,
    label: row.label,
    approved: row.approved === 1,
    model: row.model,
    modelVersion: row.model_version,
    historyLength: row.history_length,
    transactionAt: row.transaction_at,
    decidedAt: row.decided_at,
  };
}

/** The decision already recorded for an event, if any. */
export async function findDecision(db: D1Database, eventId: string): Promise<Decision | undefined> {
  const row = await db.prepare("SELECT * FROM decisions WHERE event_id = ?").bind(eventId).first<DecisionRow>();
  return row === null ? undefined : fromRow(row);
}

/** Records a decision unless one exists for the event; returns whichever is stored. */
export async function recordDecision(db: D1Database, decision: Decision): Promise<Decision> {
  const [, stored] = await db.batch<DecisionRow>([
    db
      .prepare(
        `INSERT INTO decisions (event_id, provider, event_type, transaction_id, card_id, score, label, approved, model,
           model_version, history_length, transaction_at, decided_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
      )
      .bind(
        decision.eventId, decision.provider, decision.eventType, decision.transactionId, decision.cardId, decision.score,
        decision.label, decision.approved ? 1 : 0, decision.model, decision.modelVersion, decision.historyLength,
        decision.transactionAt, decision.decidedAt,
      ),
    db.prepare("SELECT * FROM decisions WHERE event_id = ?").bind(decision.eventId),
  ]);
  const row = stored?.results[0];
  if (row === undefined) throw new Error(`decision for ${decision.eventId} was not stored`);
  return fromRow(row);
}

/** The DecisionStore of the fraud task, backed by D1. */
export function d1Decisions(db: D1Database) {
  return { find: (eventId: string) => findDecision(db, eventId), record: (decision: Decision) => recordDecision(db, decision) };
}
