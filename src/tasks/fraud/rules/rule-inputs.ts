// What a rule reads about a payment: the transaction, aggregates of the card's history and the
// model's score. Stored with each decision, so a draft rule can be backtested on past payments.
import type { Transaction } from "../transaction";

export interface RuleInputs {
  transaction: {
    amount: number;
    currency: string;
    method: string;
    mcc: string;
    merchant_id: string;
    merchant_state: string;
    merchant_city: string;
    merchant_zip: string;
    errors: string[];
    /** Hour of day, UTC (0–23). */
    hour: number;
  };
  card: {
    id: string;
    /** Earlier transactions the decision saw (the model's window: up to 6). */
    history_count: number;
    mean_amount: number;
    max_amount: number;
    new_merchant: boolean;
    new_mcc: boolean;
    charges_last_hour: number;
    small_online_last_hour: number;
  };
  score: number;
  label: string;
  provider: string;
}

const HOUR_MS = 60 * 60 * 1000;
const SMALL_AMOUNT = 5;
const online = (t: Transaction) => t.method === "online" || t.method === "keyed_in";

export function ruleInputs(
  current: Transaction,
  history: readonly Transaction[],
  score: number,
  label: string,
  provider: string,
): RuleInputs {
  const amounts = history.map((t) => t.amount);
  const lastHour = history.filter((t) => current.timestamp - t.timestamp <= HOUR_MS);
  return {
    transaction: {
      amount: current.amount,
      currency: current.currency,
      method: current.method,
      mcc: current.merchant.mcc,
      merchant_id: current.merchant.id,
      merchant_state: current.merchant.state ?? "",
      merchant_city: current.merchant.city ?? "",
      merchant_zip: current.merchant.zip ?? "",
      errors: [...current.errors],
      hour: new Date(current.timestamp).getUTCHours(),
    },
    card: {
      id: current.card_id,
      history_count: history.length,
      mean_amount: amounts.length === 0 ? 0 : amounts.reduce((a, b) => a + b, 0) / amounts.length,
      max_amount: amounts.length === 0 ? 0 : Math.max(...amounts),
      new_merchant: !history.some((t) => t.merchant.id === current.merchant.id),
      new_mcc: !history.some((t) => t.merchant.mcc === current.merchant.mcc),
      charges_last_hour: lastHour.length,
      small_online_last_hour: lastHour.filter((t) => online(t) && t.amount <= SMALL_AMOUNT).length,
    },
    score,
    label,
    provider,
  };
}
