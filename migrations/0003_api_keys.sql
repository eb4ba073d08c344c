-- API keys as data: each application's key with its scopes and limits. Only the SHA-256 of a
-- key is stored (keys are 256-bit random, so a fast hash suffices); the key itself is shown
-- once, when it is created or rotated. The API_KEYS secret's keys are not here: they are the
-- bootstrap admin keys.
CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,              -- key_<16 hex>
  name          TEXT NOT NULL,
  key_hash      TEXT NOT NULL UNIQUE,          -- hex SHA-256 of the key
  key_prefix    TEXT NOT NULL,                 -- the key's first characters, to recognise it
  scopes        TEXT NOT NULL,                 -- JSON array of scope names
  limits        TEXT NOT NULL DEFAULT '{}',    -- JSON: requests_per_minute, tokens_per_*
  created_at    TEXT NOT NULL,
  rotated_at    TEXT,
  last_used_at  TEXT,
  revoked_at    TEXT
);

-- The audit trail: one row per authenticated request, who (key id), what (route template,
-- model, status, tokens, latency) and when; never a prompt, an output, a path's values (the
-- route template is stored, not the path: a card id stays out) or a presented key. Written
-- after the answer (waitUntil); rows older than 30 days are pruned (src/tasks/keys/audit.ts).
CREATE TABLE audit_log (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  key_id            TEXT NOT NULL,               -- key_…, bootstrap-<n> or anonymous
  at                TEXT NOT NULL,               -- ISO 8601 (UTC), when the request arrived
  method            TEXT NOT NULL,
  route             TEXT NOT NULL,               -- e.g. /v1/fraud/cards/:card
  model             TEXT,
  status            INTEGER NOT NULL,
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  latency_ms        INTEGER NOT NULL             -- until the answer's headers
);
CREATE INDEX audit_log_by_key ON audit_log (key_id, at);
CREATE INDEX audit_log_by_time ON audit_log (at);
