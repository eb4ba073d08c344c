// Whether D1 holds the schema the webhooks write to: a Worker deployed without its migrations
// is an operator error (503 not_configured naming the migration), not a 500 "no such table".
import { memoWeak } from "../../../memos";

/** Each migration in migrations/ and a table it creates. */
export const MIGRATIONS = [
  { migration: "0001_decisions.sql", table: "decisions" },
  { migration: "0002_transaction_decisions.sql", table: "unscored_events" },
  { migration: "0004_fraud_reasons_outcomes.sql", table: "fraud_outcomes" },
] as const;

const verified = memoWeak<D1Database, true>("fraud.d1-schema");

/**
 * The migrations not applied to `db` (empty when all are); a complete schema is remembered per
 * isolate.
 */
export async function missingMigrations(db: D1Database): Promise<string[]> {
  if (verified.has(db)) return [];
  const { results } = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
    .all<{ name: string }>();
  const tables = new Set(results.map((row) => row.name));
  const missing = MIGRATIONS.filter(({ table }) => !tables.has(table)).map(
    ({ migration }) => migration,
  );
  if (missing.length === 0) verified.set(db, true);
  return missing;
}
