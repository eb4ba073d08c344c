-- Every fraud decision, written before the webhook or API call is answered.
-- event_id is the provider's event id (Stripe evt_…, Adyen pspReference:eventCode):
-- the primary key makes a duplicate delivery find the first decision instead of a second row.
CREATE TABLE IF NOT EXISTS decisions (
  event_id       TEXT PRIMARY KEY,
  provider       TEXT NOT NULL,
  event_type     TEXT NOT NULL,
  transaction_id TEXT NOT NULL,
  card_id        TEXT NOT NULL,
  score          REAL NOT NULL,
  label          TEXT NOT NULL CHECK (label IN ('LEGIT', 'SUSPECT', 'FRAUD')),
  approved       INTEGER NOT NULL,
  model          TEXT NOT NULL,
  model_version  TEXT NOT NULL,
  history_length INTEGER NOT NULL,
  transaction_at TEXT NOT NULL,
  decided_at     TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS decisions_card ON decisions (card_id, transaction_at);
