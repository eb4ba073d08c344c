// Time-major windows [window, batch, features]: for each account, the transactions before
// the current one (oldest first) and then the current one. A history shorter than
// window − 1 is left-padded with all-zero rows, exactly as the model was trained.
import type { FraudFeatures } from "../../models/manifest";
import { featurizeInto, toTabFormer } from "./featurize";
import type { Transaction } from "./transaction";

export interface Account {
  /** Earlier transactions of the card, any order; only the latest window − 1 are used. */
  history: readonly Transaction[];
  current: Transaction;
}

export interface Windows {
  data: Float32Array;
  shape: [number, number, number];
  /** Real (unpadded) history rows used per account. */
  historyUsed: number[];
}

/**
 * The history the model sees: the latest `size` transactions before the current one, oldest first.
 */
export function recentHistory(
  history: readonly Transaction[],
  current: Transaction,
  size: number,
): Transaction[] {
  return history
    .filter(
      (transaction) => transaction.id !== current.id && transaction.timestamp <= current.timestamp,
    )
    .toSorted((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1))
    .slice(-size);
}

/** `into`: an array of window × accounts × features to clear and fill instead of a new one. */
export function buildWindows(
  accounts: readonly Account[],
  window: number,
  features: FraudFeatures,
  into?: Float32Array,
): Windows {
  const batch = accounts.length;
  const width = features.count;
  if (into !== undefined && into.length !== window * batch * width)
    throw new RangeError(`${window * batch * width} window values cannot fill ${into.length}`);
  const data = into?.fill(0) ?? new Float32Array(window * batch * width);
  const historyUsed = accounts.map((account, b) => {
    const rows = [...recentHistory(account.history, account.current, window - 1), account.current];
    const padding = window - rows.length;
    rows.forEach((transaction, i) =>
      featurizeInto(data, ((padding + i) * batch + b) * width, toTabFormer(transaction), features),
    );
    return rows.length - 1;
  });
  return { data, shape: [window, batch, width], historyUsed };
}
