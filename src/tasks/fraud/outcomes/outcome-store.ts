// Outcomes in D1, one row per provider event (a redelivery finds its row and changes nothing),
// kept whether or not the payment was scored; a payment's label is whether any is fraudulent.
import type { Outcome } from "./outcome";

/** Stores an outcome once; true when this delivery was the first. */
export async function recordOutcome(db: D1Database, outcome: Outcome): Promise<boolean> {
  const result = await db
    .prepare(
      "INSERT INTO fraud_outcomes (event_id, transaction_key, provider, kind, fraudulent, " +
        "reason, reported_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT (event_id) DO NOTHING",
    )
    .bind(
      outcome.eventId,
      outcome.transactionKey,
      outcome.provider,
      outcome.kind,
      outcome.fraudulent ? 1 : 0,
      outcome.reason,
      outcome.reportedAt,
      new Date().toISOString(),
    )
    .run();
  return result.meta.changes > 0;
}

export interface LabelCounts {
  /** Decisions in the window (by decided_at). */
  decisions: number;
  /** Of those, payments with an outcome; and with a fraudulent one. */
  labelled: number;
  fraudulent: number;
  /** Per flag level: decisions flagged, and flagged whose payment was fraud. */
  flagged: { FRAUD: number; SUSPECT: number };
  caught: { FRAUD: number; SUSPECT: number };
  /** Outcomes in the window of payments never scored. */
  unscoredOutcomes: number;
}

/**
 * Counts for live precision and recall: decisions decided in [since, until) joined with the
 * fraudulent label of their payment (one per payment however many outcomes it has).
 */
export async function labelCounts(
  db: D1Database,
  since: string,
  until: string,
): Promise<LabelCounts> {
  const row = await db
    .prepare(
      `WITH labels AS (
         SELECT transaction_key, max(fraudulent) AS fraudulent FROM fraud_outcomes
         GROUP BY transaction_key),
       scored AS (
         SELECT d.label, l.fraudulent FROM decisions d
         LEFT JOIN labels l ON l.transaction_key = d.transaction_key
         WHERE d.decided_at >= ?1 AND d.decided_at < ?2)
       SELECT count(*) AS decisions,
         count(fraudulent) AS labelled,
         coalesce(sum(fraudulent), 0) AS fraudulent,
         coalesce(sum(label = 'FRAUD'), 0) AS flagged_fraud,
         coalesce(sum(label IN ('FRAUD', 'SUSPECT')), 0) AS flagged_suspect,
         coalesce(sum(label = 'FRAUD' AND fraudulent = 1), 0) AS caught_fraud,
         coalesce(sum(label IN ('FRAUD', 'SUSPECT') AND fraudulent = 1), 0) AS caught_suspect,
         (SELECT count(*) FROM fraud_outcomes o WHERE o.received_at >= ?1 AND o.received_at < ?2
            AND NOT EXISTS (SELECT 1 FROM decisions d
                            WHERE d.transaction_key = o.transaction_key)) AS unscored_outcomes
       FROM scored`,
    )
    .bind(since, until)
    .first<Record<string, number>>();
  const n = (name: string) => Number(row?.[name] ?? 0);
  return {
    decisions: n("decisions"),
    labelled: n("labelled"),
    fraudulent: n("fraudulent"),
    flagged: { FRAUD: n("flagged_fraud"), SUSPECT: n("flagged_suspect") },
    caught: { FRAUD: n("caught_fraud"), SUSPECT: n("caught_suspect") },
    unscoredOutcomes: n("unscored_outcomes"),
  };
}
