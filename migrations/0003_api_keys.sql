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
