// A fraud decision: one per payment (keyed on the provider's transaction id), made inside the
// card's Durable Object together with its history entry, and copied into D1 from an outbox.
import type { Reason } from "../reasons";
import type { RuleInputs } from "../rules/rule-inputs";
import type { RuleAction, TriggeredRule } from "../rules/rules";
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
  /** The top reasons, largest contribution first (absent on decisions made before reasons). */
  reasons?: Reason[];
  /** The score with every feature group absent; contributions sum to score − this. */
  baselineScore?: number;
  /** Every rule that matched, in order (Adyen's `triggeredTransactionRules`). */
  rulesTriggered?: TriggeredRule[];
  /** The deciding rule's action, if a rule matched. */
  ruleAction?: RuleAction;
  /** What rules read about this payment (kept for backtests). */
  ruleInputs?: RuleInputs;
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
  | { kind: "decision"; decision: Decision; event?: DecisionEvent }
  | { kind: "event"; event: DecisionEvent };

function eventStatement(db: D1Database, event: DecisionEvent): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO decision_events (event_id, transaction_key, provider, event_type, received_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING`,
    )
    .bind(event.eventId, event.transactionKey, event.provider, event.eventType, event.receivedAt);
}

function statementsFor(db: D1Database, entry: OutboxEntry): D1PreparedStatement[] {
  if (entry.kind === "event") return [eventStatement(db, entry.event)];
  const statements = [decisionStatement(db, entry.decision)];
  if (entry.event !== undefined) statements.push(eventStatement(db, entry.event));
  return statements;
}

function decisionStatement(db: D1Database, d: Decision): D1PreparedStatement {
  return db
    .prepare(
      "INSERT INTO decisions (transaction_key, event_id, provider, event_type, transaction_id, " +
        `card_id, score, label, approved,
         decided_by, model, model_version, history_length, transaction_at, decided_at, reasons,
         rules_triggered, rule_inputs)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
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
      d.reasons === undefined ? null : JSON.stringify(d.reasons),
      d.rulesTriggered === undefined ? null : JSON.stringify(d.rulesTriggered),
      d.ruleInputs === undefined ? null : JSON.stringify(d.ruleInputs),
    );
}

/**
 * Copies outbox entries into D1 in one batch; idempotent, so a replay after a crash is harmless.
 */
export async function copyToD1(db: D1Database, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.batch(entries.flatMap((entry) => statementsFor(db, entry)));
}
