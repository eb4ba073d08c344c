// The decision ledger as the fraud task sees it (its ports): each card's history and decisions,
// a payment decided once, and the stores a webhook needs. card-history.ts implements them with one
// Durable Object per card, which also makes the card's decisions (src/cards.ts), D1 getting a
// copy through an outbox.
import type { Transaction } from "../transaction";
import type { Decision, DecisionEvent } from "./decisions";
import type { UnscoredEvent } from "./unscored-events";
import type { Outcome } from "../outcomes/outcome";
import type { LabelCounts } from "../outcomes/outcome-store";
import type { Rule } from "../rules/rules";
import type { BacktestRow } from "../rules/rule-store";

export type Prepared =
  | { decided: Decision }
  | { decided?: undefined; history: Transaction[]; version: number };
export type Committed = { decision: Decision; duplicate: boolean } | { stale: true };

export interface Delivery {
  eventId: string;
  eventType: string;
  provider: Decision["provider"];
  transactionKey: string;
}

export interface CardView {
  history: Transaction[];
  decisions: Decision[];
  events: DecisionEvent[];
}

/** A payment to decide, as its provider's event describes it. */
export interface PaymentEvent {
  eventId: string;
  provider: Decision["provider"];
  eventType: string;
  /** The payment's key: every event of one payment shares it. */
  transactionKey: string;
  transaction: Transaction;
  /** The provider's outcome, for notifications of payments it already decided. */
  providerApproved?: boolean;
}

/** A payment's decision; `duplicate`: it was decided before, by an earlier event. */
export interface Decided {
  decision: Decision;
  duplicate: boolean;
}

/** One card's ledger as a decision uses it, inside the card's Durable Object. */
export interface CardLedger {
  prepare(cardId: string, delivery: Delivery, at: number, size: number): Promise<Prepared>;
  commit(
    cardId: string,
    delivery: Delivery,
    transaction: Transaction,
    decision: Decision,
    version: number | null,
  ): Promise<Committed>;
}

/** The cards as the Worker reaches them: one call decides a payment in its card's object. */
export interface Cards {
  /** Decides the payment once, scored against its card's history, committed with it. */
  decide(cardId: string, event: PaymentEvent): Promise<Decided>;
  /** A card's stored history, decisions and the deliveries that reached them. */
  view(cardId: string): Promise<CardView>;
}

/** What the fraud webhooks store into, built by the composition root. */
export interface FraudStores {
  ledger: Cards;
  /** The migrations the decisions database (D1) lacks; none: it is ready. */
  missingMigrations(): Promise<string[]>;
  /** An acknowledged event that could not be scored, kept for review. */
  recordUnscored(event: UnscoredEvent): Promise<void>;
  /** An outcome a provider reported, once per event; true when this delivery was the first. */
  recordOutcome(outcome: Outcome): Promise<boolean>;
  /** Decisions of [since, until) against their payments' labels (live precision and recall). */
  labelCounts(since: string, until: string): Promise<LabelCounts>;
  /** Every rule's current version, and the next version of one. */
  currentRules(): Promise<Rule[]>;
  putRule(rule: Omit<Rule, "version">): Promise<Rule>;
  /** Stored decisions of a window with their rule inputs and labels (backtests). */
  backtestRows(since: string, until: string, limit: number): Promise<BacktestRow[]>;
}
