// The card Durable Object's SQLite schema. A card's history entry, its decision and the event
// ids that reached it live side by side, so one transactionSync writes all of them or none.
export function createCardSchema(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS history (
    transaction_key TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    body TEXT NOT NULL
  )`);
  sql.exec("CREATE INDEX IF NOT EXISTS history_at ON history (at, transaction_key)");
  sql.exec(`CREATE TABLE IF NOT EXISTS decisions (
    transaction_key TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    body TEXT NOT NULL
  )`);
  sql.exec(`CREATE TABLE IF NOT EXISTS events (
    event_id TEXT PRIMARY KEY,
    transaction_key TEXT NOT NULL,
    body TEXT NOT NULL
  )`);
  // Entries not yet copied into D1; replayed (idempotently) until D1 has them.
  sql.exec(
    "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)",
  );
  // Before decisions moved here, history was keyed on the event id; keep those entries.
  const legacy = sql
    .exec<{ n: number }>(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'transactions'",
    )
    .one().n;
  if (legacy > 0) {
    sql.exec(
      "INSERT OR IGNORE INTO history (transaction_key, at, body) " +
        "SELECT 'legacy:' || event_id, at, body FROM transactions",
    );
    sql.exec("DROP TABLE transactions");
  }
}
