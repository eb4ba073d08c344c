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

const DECISION_COLUMNS = [
  "transaction_key",
  "event_id",
  "provider",
  "event_type",
  "transaction_id",
  "card_id",
  "score",
  "label",
  "approved",
  "decided_by",
  "model",
  "model_version",
  "history_length",
  "transaction_at",
  "decided_at",
  "reasons",
  "rules_triggered",
  "rule_inputs",
] as const;
const EVENT_COLUMNS = [
  "event_id",
  "transaction_key",
  "provider",
  "event_type",
  "received_at",
] as const;

/**
 * One INSERT of many rows: the rows travel as one JSON array of arrays (a single bound
 * parameter, so no batch meets D1's limit of 100), each column read back by its position.
 */
function insertRows(
  db: D1Database,
  table: string,
  columns: readonly string[],
  key: string,
  rows: readonly unknown[][],
): D1PreparedStatement {
  const values = columns.map((_, i) => `json_extract(value, '$[${i}]')`).join(", ");
  return db
    .prepare(
      `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${values} FROM json_each(?) ` +
        `WHERE true ON CONFLICT (${key}) DO NOTHING`,
    )
    .bind(JSON.stringify(rows));
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

const decisionRow = (d: Decision): unknown[] => [
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
  json(d.reasons),
  json(d.rulesTriggered),
  json(d.ruleInputs),
];

const eventRow = (e: DecisionEvent): unknown[] => [
  e.eventId,
  e.transactionKey,
  e.provider,
  e.eventType,
  e.receivedAt,
];

/**
 * Copies outbox entries into D1 in one batch of at most two statements (the decisions, the
 * deliveries); idempotent, so a replay after a crash is harmless.
 */
export async function copyToD1(db: D1Database, entries: readonly OutboxEntry[]): Promise<void> {
  const decisions: unknown[][] = [];
  const events: unknown[][] = [];
  for (const entry of entries) {
    if (entry.kind === "decision") decisions.push(decisionRow(entry.decision));
    if (entry.event !== undefined) events.push(eventRow(entry.event));
  }
  const statements: D1PreparedStatement[] = [];
  if (decisions.length > 0)
    statements.push(insertRows(db, "decisions", DECISION_COLUMNS, "transaction_key", decisions));
  if (events.length > 0)
    statements.push(insertRows(db, "decision_events", EVENT_COLUMNS, "event_id", events));
  if (statements.length > 0) await db.batch(statements);
}
