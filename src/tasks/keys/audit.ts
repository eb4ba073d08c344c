// The audit trail in D1 (migrations/0003_api_keys.sql, audit_log): one row per authenticated
// request, written after the answer; a key's recent activity and its usage per day; rows older
// than AUDIT_RETENTION_DAYS pruned at most once an hour per isolate.
import { memoSlot } from "../../memos";
import { guarded } from "./key-store";

export const AUDIT_RETENTION_DAYS = 30;
const PRUNE_EVERY_MS = 3_600_000;

export interface AuditEntry {
  keyId: string;
  /** When the request arrived (ms since the epoch). */
  at: number;
  method: string;
  /** The matched route's template (`/v1/fraud/cards/:card`), never the path's values. */
  route: string;
  model: string | undefined;
  status: number;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
}

export interface ActivityRow {
  at: string;
  method: string;
  route: string;
  model: string | null;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
}

export interface DailyUsageRow {
  day: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
}

// When this isolate last pruned.
const pruned = memoSlot("keys.audit-pruned", 0);

export async function recordAudit(db: D1Database, entry: AuditEntry): Promise<void> {
  const insert = db
    .prepare(
      "INSERT INTO audit_log (key_id, at, method, route, model, status, prompt_tokens, " +
        "completion_tokens, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(
      entry.keyId,
      new Date(entry.at).toISOString(),
      entry.method,
      entry.route,
      entry.model ?? null,
      entry.status,
      entry.promptTokens,
      entry.completionTokens,
      Math.round(entry.latencyMs),
    );
  if (entry.at - pruned.value < PRUNE_EVERY_MS) {
    await insert.run();
    return;
  }
  pruned.value = entry.at;
  const cutoff = new Date(entry.at - AUDIT_RETENTION_DAYS * 86_400_000).toISOString();
  await db.batch([insert, db.prepare("DELETE FROM audit_log WHERE at < ?").bind(cutoff)]);
}

/** A key's latest requests, newest first. */
export async function recentActivity(
  db: D1Database,
  keyId: string,
  limit: number,
): Promise<ActivityRow[]> {
  const { results } = await guarded(() =>
    db
      .prepare(
        "SELECT at, method, route, model, status, prompt_tokens, completion_tokens, latency_ms " +
          "FROM audit_log WHERE key_id = ? ORDER BY at DESC, id DESC LIMIT ?",
      )
      .bind(keyId, limit)
      .all<ActivityRow>(),
  );
  return results;
}

/** A key's requests and tokens per UTC day, the latest `days` days, newest first. */
export async function dailyUsage(
  db: D1Database,
  keyId: string,
  days: number,
  now = Date.now(),
): Promise<DailyUsageRow[]> {
  const since = new Date(now - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const { results } = await guarded(() =>
    db
      .prepare(
        "SELECT substr(at, 1, 10) AS day, count(*) AS requests, " +
          "sum(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS errors, " +
          "sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens " +
          "FROM audit_log WHERE key_id = ? AND at >= ? GROUP BY day ORDER BY day DESC",
      )
      .bind(keyId, since)
      .all<DailyUsageRow>(),
  );
  return results;
}
