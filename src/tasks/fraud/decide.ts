// A payment event's fraud decision: idempotent on the event id, scored against the card's
// history before it, appended to that history once, and stored before anyone is answered.
import type { Decision } from "../../storage/decisions";
import type { FraudScorer } from "./fraud-scoring";
import type { Transaction } from "./transaction";

export interface DecisionStore {
  find(eventId: string): Promise<Decision | undefined>;
  /** Stores the decision unless the event has one; returns the stored one. */
  record(decision: Decision): Promise<Decision>;
}

export interface HistoryStore {
  history(cardId: string, eventId: string, at: number, size: number): Promise<Transaction[]>;
  append(cardId: string, eventId: string, transaction: Transaction): Promise<boolean>;
}

export interface PaymentEvent {
  eventId: string;
  provider: Decision["provider"];
  eventType: string;
  transaction: Transaction;
}

/**
 * Decides once per event. A duplicate (or a retry after a failed store) finds the first
 * decision; the history append is idempotent too, so a retry never doubles a transaction.
 * Any failure throws, so the caller answers non-2xx and the provider retries.
 */
export async function decide(scorer: FraudScorer, decisions: DecisionStore, histories: HistoryStore, event: PaymentEvent): Promise<{ decision: Decision; duplicate: boolean }> {
  const existing = await decisions.find(event.eventId);
  if (existing !== undefined) return { decision: existing, duplicate: true };

  const { transaction } = event;
  const history = await histories.history(transaction.card_id, event.eventId, transaction.timestamp, scorer.manifest.window - 1);
  const [result] = (await scorer.score([{ history, current: transaction }])).results;
  if (result === undefined) throw new Error("the scorer returned no result");
  await histories.append(transaction.card_id, event.eventId, transaction);
  const decidedAt = new Date().toISOString();
  const decision = await decisions.record({
    eventId: event.eventId,
    provider: event.provider,
    eventType: event.eventType,
    transactionId: transaction.id,
    cardId: transaction.card_id,
    score: result.score,
    label: result.label,
    approved: result.label !== "FRAUD",
    model: scorer.manifest.name,
    modelVersion: scorer.manifest.version,
    historyLength: result.historyUsed,
    transactionAt: new Date(transaction.timestamp).toISOString(),
    decidedAt,
  });
  // A concurrent delivery of the same event may have stored its decision first.
  return { decision, duplicate: decision.decidedAt !== decidedAt };
}
