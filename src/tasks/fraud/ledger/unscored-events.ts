// Signed events the service could not score, recorded with the reason (straight into D1,
// before the 2xx): acknowledged, never retried for days by the provider, never silently lost.
export interface UnscoredEvent {
  eventId: string;
  provider: "stripe" | "adyen";
  eventType: string;
  objectId: string;
  /** The payment it belongs to, where known (a PaymentIntent's latest charge). */
  transactionKey: string | null;
  reason: string;
  /** For an Issuing authorization: what the ISSUING_UNSCORED_POLICY answered. */
  approved: boolean | null;
}

/** Records an unscored event once (a redelivery keeps the first record). */
export async function recordUnscored(db: D1Database, event: UnscoredEvent): Promise<void> {
  await db
    .prepare(
      "INSERT INTO unscored_events (event_id, provider, event_type, object_id, transaction_key, " +
        `reason, approved, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
    )
    .bind(
      event.eventId,
      event.provider,
      event.eventType,
      event.objectId,
      event.transactionKey,
      event.reason,
      event.approved === null ? null : event.approved ? 1 : 0,
      new Date().toISOString(),
    )
    .run();
}
