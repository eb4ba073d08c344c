// Canary rollbacks shared through D1 (migrations/0005_canary_rollbacks.sql): the first isolate
// to roll a canary back records why; the others find it when they next ask.
import type { Rollback, SharedRollbacks } from "./canary-monitor";

interface RollbackRow {
  reason: Rollback["reason"];
  error_rate: number;
  p95_ms: number;
  samples: number;
  at: number;
}

export function d1Rollbacks(db: D1Database): SharedRollbacks {
  return {
    async publish(model, configKey, rollback) {
      await db
        .prepare(
          "INSERT INTO canary_rollbacks (model, config_key, reason, error_rate, p95_ms, samples, " +
            "at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (model, config_key) DO NOTHING",
        )
        .bind(
          model,
          configKey,
          rollback.reason,
          rollback.errorRate,
          rollback.p95Ms,
          rollback.samples,
          rollback.at,
        )
        .run();
    },
    async read(model, configKey) {
      const row = await db
        .prepare(
          "SELECT reason, error_rate, p95_ms, samples, at FROM canary_rollbacks " +
            "WHERE model = ? AND config_key = ?",
        )
        .bind(model, configKey)
        .first<RollbackRow>();
      return row === null
        ? undefined
        : {
            reason: row.reason,
            errorRate: row.error_rate,
            p95Ms: row.p95_ms,
            samples: row.samples,
            at: row.at,
          };
    },
  };
}
