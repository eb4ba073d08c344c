-- Decisions keyed on the payment, not the event: Stripe sends charge.succeeded and
-- charge.captured for one ch_…, and a payment is one transaction however many events describe
-- it. D1 is now a copy fed from each card's Durable Object (its outbox), which is where the
-- decision, the history entry and the event id are written in one transaction.
CREATE TABLE decisions_by_transaction (
  transaction_key TEXT PRIMARY KEY,          -- stripe:ch_…, stripe:iauth_…, adyen:<pspReference>
  event_id        TEXT NOT NULL,             -- the first event decided
  provider        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  transaction_id  TEXT NOT NULL,
  card_id         TEXT NOT NULL,
  score           REAL NOT NULL,
  label           TEXT NOT NULL CHECK (label IN ('LEGIT', 'SUSPECT', 'FRAUD')),
  approved        INTEGER NOT NULL,
  decided_by      TEXT NOT NULL CHECK (decided_by IN ('model', 'provider')),
  model           TEXT NOT NULL,
  model_version   TEXT NOT NULL,
  history_length  INTEGER NOT NULL,
  transaction_at  TEXT NOT NULL,
  decided_at      TEXT NOT NULL
);

-- Decisions made before this migration were keyed on the event: the first per transaction wins.
INSERT INTO decisions_by_transaction
  SELECT provider || ':' || transaction_id, event_id, provider, event_type, transaction_id, card_id, score, label, approved,
         'model', model, model_version, history_length, transaction_at, decided_at
  FROM decisions WHERE true
  ON CONFLICT (transaction_key) DO NOTHING;

-- Every delivery that reached a decided payment.
CREATE TABLE decision_events (
  event_id        TEXT PRIMARY KEY,
  transaction_key TEXT NOT NULL,
  provider        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  received_at     TEXT NOT NULL
);
INSERT INTO decision_events SELECT event_id, provider || ':' || transaction_id, provider, event_type, decided_at FROM decisions WHERE true
  ON CONFLICT (event_id) DO NOTHING;

DROP TABLE decisions;
ALTER TABLE decisions_by_transaction RENAME TO decisions;
CREATE INDEX decisions_card ON decisions (card_id, transaction_at);
CREATE INDEX decision_events_transaction ON decision_events (transaction_key);

-- Signed events that could not be scored, with the reason (acknowledged 2xx, not retried).
CREATE TABLE unscored_events (
  event_id        TEXT PRIMARY KEY,
  provider        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  object_id       TEXT NOT NULL,
  transaction_key TEXT,
  reason          TEXT NOT NULL,
  approved        INTEGER,                   -- Issuing: what ISSUING_UNSCORED_POLICY answered
  received_at     TEXT NOT NULL
);
