// Rules in D1, versioned (a change inserts the next version; the highest is current), and the
// enabled ones compiled once per isolate for a few seconds, so deciding a payment reads no D1.
import { memoWeak } from "../../../memos";
import { activate, type ActiveRule, type Rule, type RuleAction } from "./rules";
import type { RuleInputs } from "./rule-inputs";

/** How long an isolate decides with the rules it read before reading them again. */
const CACHE_MS = 5_000;

interface RuleRow {
  id: string;
  version: number;
  expression: string;
  action: RuleAction;
  position: number;
  enabled: number;
  description: string;
}

const toRule = (row: RuleRow): Rule => ({
  id: row.id,
  version: row.version,
  expression: row.expression,
  action: row.action,
  order: row.position,
  enabled: row.enabled === 1,
  description: row.description,
});

/** Every rule's current version, in order. */
export async function currentRules(db: D1Database): Promise<Rule[]> {
  const { results } = await db
    .prepare(
      "SELECT * FROM fraud_rules r WHERE version = " +
        "(SELECT max(version) FROM fraud_rules WHERE id = r.id) ORDER BY position, id",
    )
    .all<RuleRow>();
  return results.map(toRule);
}

/** Stores the next version of a rule (the first when it is new) and returns it. */
export async function putRule(db: D1Database, rule: Omit<Rule, "version">): Promise<Rule> {
  const row = await db
    .prepare(
      "INSERT INTO fraud_rules (id, version, expression, action, position, enabled, description, " +
        "created_at) SELECT ?1, coalesce(max(version), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 " +
        "FROM fraud_rules WHERE id = ?1 RETURNING *",
    )
    .bind(
      rule.id,
      rule.expression,
      rule.action,
      rule.order,
      rule.enabled ? 1 : 0,
      rule.description,
      new Date().toISOString(),
    )
    .first<RuleRow>();
  if (row === null) throw new Error("the rule was not stored");
  cache.delete(db);
  return toRule(row);
}

// The compiled enabled rules and when they were read.
const cache = memoWeak<D1Database, { at: number; rules: ActiveRule[] }>("fraud.rules");

/** The enabled rules, compiled; read from D1 at most every CACHE_MS (the last read if it fails). */
export async function activeRules(db: D1Database, now = Date.now()): Promise<ActiveRule[]> {
  const cached = cache.get(db);
  if (cached !== undefined && now - cached.at < CACHE_MS) return cached.rules;
  try {
    const rules = (await currentRules(db)).filter((rule) => rule.enabled).map(activate);
    cache.set(db, { at: now, rules });
    return rules;
  } catch (error) {
    console.warn(JSON.stringify({ event: "fraud_rules_unreadable", error: String(error) }));
    return cached?.rules ?? [];
  }
}

export interface BacktestRow {
  transactionKey: string;
  cardId: string;
  transactionAt: string;
  label: string;
  inputs: RuleInputs;
  /** 1: an outcome called the payment fraud; 0: outcomes, none fraud; null: no outcome. */
  fraudulent: number | null;
}

/** Decisions of [since, until) that stored their rule inputs, oldest first, at most `limit`. */
export async function backtestRows(
  db: D1Database,
  since: string,
  until: string,
  limit: number,
): Promise<BacktestRow[]> {
  const { results } = await db
    .prepare(
      `SELECT d.transaction_key, d.card_id, d.transaction_at, d.label, d.rule_inputs,
         (SELECT max(fraudulent) FROM fraud_outcomes o
          WHERE o.transaction_key = d.transaction_key) AS fraudulent
       FROM decisions d
       WHERE d.decided_at >= ? AND d.decided_at < ? AND d.rule_inputs IS NOT NULL
       ORDER BY d.decided_at LIMIT ?`,
    )
    .bind(since, until, limit)
    .all<{
      transaction_key: string;
      card_id: string;
      transaction_at: string;
      label: string;
      rule_inputs: string;
      fraudulent: number | null;
    }>();
  return results.map((row) => ({
    transactionKey: row.transaction_key,
    cardId: row.card_id,
    transactionAt: row.transaction_at,
    label: row.label,
    inputs: JSON.parse(row.rule_inputs) as RuleInputs,
    fraudulent: row.fraudulent,
  }));
}
