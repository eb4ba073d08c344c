-- Canary rollbacks shared by every isolate: the first isolate whose window crosses a threshold
-- records it; the others read it (every 10 s) and move their traffic back to the stable version.
-- Keyed by the canary's configuration, so a new ORIGIN_CANARY value starts afresh.
CREATE TABLE canary_rollbacks (
  model      TEXT NOT NULL,
  config_key TEXT NOT NULL,
  reason     TEXT NOT NULL CHECK (reason IN ('error_rate', 'latency')),
  error_rate REAL NOT NULL,
  p95_ms     REAL NOT NULL,
  samples    INTEGER NOT NULL,
  at         INTEGER NOT NULL,
  PRIMARY KEY (model, config_key)
);
