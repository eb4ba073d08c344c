// The decision ledger as the fraud task sees it (its port): each card's history and decisions,
// a payment decided once, and the stores a webhook needs. card-history.ts implements it with one
// Durable Object per card, D1 getting a copy through an outbox.
import type { Transaction } from "../transaction";
import type { Decision, DecisionEvent } from "./decisions";
import type { UnscoredEvent } from "./unscored-events";
import type { Outcome } from "../outcomes/outcome";
import type { LabelCounts } from "../outcomes/outcome-store";
import type { ActiveRule, Rule } from "../rules/rules";
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

export interface CardLedger {
  prepare(cardId: string, delivery: Delivery, at: number, size: number): Promise<Prepared>;
  commit(
    cardId: string,
    delivery: Delivery,
    transaction: Transaction,
    decision: Decision,
    version: number | null,
  ): Promise<Committed>;
  /** A card's stored history, decisions and the deliveries that reached them. */
  view(cardId: string): Promise<CardView>;
}

/** What the fraud webhooks store into, built by the composition root. */
export interface FraudStores {
  ledger: CardLedger;
  /** The migrations the decisions database (D1) lacks; none: it is ready. */
  missingMigrations(): Promise<string[]>;
  /** An acknowledged event that could not be scored, kept for review. */
  recordUnscored(event: UnscoredEvent): Promise<void>;
  /** An outcome a provider reported, once per event; true when this delivery was the first. */
  recordOutcome(outcome: Outcome): Promise<boolean>;
  /** Decisions of [since, until) against their payments' labels (live precision and recall). */
  labelCounts(since: string, until: string): Promise<LabelCounts>;
  /** The enabled rules, compiled (cached per isolate for a few seconds). */
  activeRules(): Promise<ActiveRule[]>;
  /** Every rule's current version, and the next version of one. */
  currentRules(): Promise<Rule[]>;
  putRule(rule: Omit<Rule, "version">): Promise<Rule>;
  /** Stored decisions of a window with their rule inputs and labels (backtests). */
  backtestRows(since: string, until: string, limit: number): Promise<BacktestRow[]>;
}
