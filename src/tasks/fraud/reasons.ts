// Reason codes: the feature groups that pushed a score up most (attribution.ts), named by
// stable codes with human text, chosen with what the card's history says about the payment.
import { type Attribution, PLAYERS, type Player } from "./attribution";
import type { Transaction } from "./transaction";

export interface Reason {
  code: string;
  text: string;
  /** The group's share of score − baseline (attribution.ts); positive: toward fraud. */
  contribution: number;
}

/** Reasons given per decision at most. */
export const TOP_REASONS = 3;
/** Contributions below this move the score too little to be a reason. */
const MIN_CONTRIBUTION = 0.01;
const SMALL_AMOUNT = 5;
const LARGE_AMOUNT = 500;
const BURST_MS = 60 * 60 * 1000;

const median = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const online = (t: Transaction) => t.method === "online" || t.method === "keyed_in";

/** The code and text of one player's reason for this payment and history. */
function describe(player: Player, current: Transaction, history: readonly Transaction[]) {
  const seen = history.length > 0;
  switch (player) {
    case "amount": {
      const typical = median(history.map((t) => t.amount));
      if (seen && typical > 0 && current.amount >= 3 * typical)
        return {
          code: "amount_far_above_card_history",
          text: `Amount is ${(current.amount / typical).toFixed(0)}× the card's typical amount`,
        };
      if (current.amount <= SMALL_AMOUNT)
        return {
          code: "small_test_sized_amount",
          text: `A charge of ${current.amount}, the size card testers use`,
        };
      if (current.amount >= LARGE_AMOUNT)
        return { code: "large_amount", text: `A large charge (${current.amount})` };
      return { code: "amount", text: `The amount (${current.amount})` };
    }
    case "history": {
      const recent = [...history, current].filter(
        (t) => current.timestamp - t.timestamp <= BURST_MS,
      );
      const small = recent.filter((t) => online(t) && t.amount <= SMALL_AMOUNT);
      if (small.length >= 3)
        return {
          code: "burst_of_small_online_charges",
          text: `${small.length} online charges of ${SMALL_AMOUNT} or less within an hour`,
        };
      if (recent.length >= 3)
        return {
          code: "rapid_succession_of_charges",
          text: `${recent.length} charges on the card within an hour`,
        };
      return { code: "card_history_pattern", text: "The card's recent transactions" };
    }
    case "merchant": {
      if (seen && !history.some((t) => t.merchant.id === current.merchant.id))
        return {
          code: "new_merchant_for_card",
          text: "First payment of the card at this merchant",
        };
      return { code: "merchant_or_location", text: "The merchant and its location" };
    }
    case "merchantCategory": {
      if (seen && !history.some((t) => t.merchant.mcc === current.merchant.mcc))
        return {
          code: "new_merchant_category_for_card",
          text: `First payment of the card in merchant category ${current.merchant.mcc}`,
        };
      return { code: "merchant_category", text: `Merchant category ${current.merchant.mcc}` };
    }
    case "entryMethod":
      if (current.method === "swipe")
        return { code: "magnetic_stripe_swipe", text: "Card swiped (magnetic stripe)" };
      if (online(current))
        return { code: "card_not_present", text: "Card not present (online or keyed in)" };
      return { code: "entry_method", text: `Entry method ${current.method}` };
    case "errors":
      return current.errors.length > 0
        ? { code: "card_errors", text: `Issuer errors: ${current.errors.join(", ")}` }
        : { code: "no_errors", text: "No issuer errors (unusual for this pattern)" };
    case "time":
      return { code: "transaction_time", text: "The date and time of the payment" };
  }
}

/**
 * Up to TOP_REASONS reasons, largest contribution first (ties in PLAYERS order), each moving the
 * score up by at least MIN_CONTRIBUTION. Deterministic: the same inputs give the same reasons.
 */
export function reasonsFor(
  attribution: Attribution,
  current: Transaction,
  history: readonly Transaction[],
): Reason[] {
  return PLAYERS.map((player) => ({ player, value: attribution.contributions[player] }))
    .filter(({ value }) => value >= MIN_CONTRIBUTION)
    .sort((a, b) => b.value - a.value)
    .slice(0, TOP_REASONS)
    .map(({ player, value }) => ({
      ...describe(player, current, history),
      contribution: Math.round(value * 1e6) / 1e6,
    }));
}
