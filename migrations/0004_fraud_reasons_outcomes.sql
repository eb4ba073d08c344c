-- Fraud decisions explained and learned from: each decision's reason codes (JSON, as the card's
-- Durable Object stores them), and the outcomes providers report later (disputes, chargebacks,
-- early fraud warnings), one row per provider event, kept whether or not the payment was scored.
ALTER TABLE decisions ADD COLUMN reasons TEXT;

CREATE TABLE fraud_outcomes (
  event_id        TEXT PRIMARY KEY,          -- evt_… or <pspReference>:<eventCode>: redeliveries keep one row
  transaction_key TEXT NOT NULL,             -- the payment: stripe:ch_…, adyen:<original pspReference>
  provider        TEXT NOT NULL,
  kind            TEXT NOT NULL CHECK (kind IN ('dispute', 'early_fraud_warning', 'chargeback', 'notification_of_fraud')),
  fraudulent      INTEGER NOT NULL,          -- 1: the outcome says the payment was fraud
  reason          TEXT,                      -- the provider's reason (Stripe dispute reason, Adyen reason code)
  reported_at     TEXT NOT NULL,
  received_at     TEXT NOT NULL
);

CREATE INDEX fraud_outcomes_transaction ON fraud_outcomes (transaction_key);
-- Live precision and recall read the decisions of a window.
CREATE INDEX decisions_decided ON decisions (decided_at);

-- Rules on top of the model (CEL conditions with an action), versioned: a change is a new row,
-- the current rule is its highest version. Decisions record the rules they triggered and the
-- inputs rules read, so a draft rule can be backtested on past payments.
CREATE TABLE fraud_rules (
  id          TEXT NOT NULL,
  version     INTEGER NOT NULL,
  expression  TEXT NOT NULL,
  action      TEXT NOT NULL CHECK (action IN ('allow', 'block', 'review', 'approve', 'decline')),
  position    INTEGER NOT NULL,              -- the rule's order: lower first
  enabled     INTEGER NOT NULL,
  description TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (id, version)
);
ALTER TABLE decisions ADD COLUMN rules_triggered TEXT;
ALTER TABLE decisions ADD COLUMN rule_inputs TEXT;
