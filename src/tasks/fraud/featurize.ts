// IBM's 220-feature recipe for the fraud model, reproduced exactly, with every vocabulary and
// scaling constant read from the model's manifest.
import { memoWeak } from "../../memos";
import type { FraudFeatures } from "../../models/manifest";
import type { Transaction } from "./transaction";

const DIGITS = 5;
const UNKNOWN = "__unknown__";
const MISSING = "missing_value";

/** TabFormer's raw fields for one transaction, as the training data spells them. */
export interface TabFormerRow {
  merchantState: string;
  zip: number;
  merchantName: string;
  merchantCity: string;
  mcc: string;
  useChip: string;
  errors: string;
  /** Milliseconds since the epoch, UTC, cut to the minute (TabFormer's Time is HH:MM). */
  timeMs: number;
  amount: number;
}

const USE_CHIP: Record<Transaction["method"], string> = {
  chip: "Chip Transaction",
  contactless: "Chip Transaction",
  swipe: "Swipe Transaction",
  keyed_in: "Online Transaction",
  online: "Online Transaction",
};

/** Maps a validated transaction onto TabFormer's columns (online merchants have city ONLINE). */
export function toTabFormer(transaction: Transaction): TabFormerRow {
  const online = transaction.method === "online" || transaction.method === "keyed_in";
  return {
    merchantState: transaction.merchant.state ?? "",
    zip: transaction.merchant.zip === undefined ? 0 : Number(transaction.merchant.zip),
    merchantName: transaction.merchant.id,
    merchantCity: transaction.merchant.city ?? (online ? "ONLINE" : ""),
    mcc: String(Number(transaction.merchant.mcc)),
    useChip: USE_CHIP[transaction.method],
    errors: transaction.errors.join(","),
    timeMs: Math.floor(transaction.timestamp / 60_000) * 60_000,
    amount: transaction.amount,
  };
}

/** The decimal encoder: `DIGITS` digits, least significant first. */
function digitsOf(value: number): number[] {
  const digits: number[] = [];
  let rest = Math.max(0, Math.trunc(value));
  for (let i = 0; i < DIGITS; i++) {
    digits.push(rest % 10);
    rest = Math.floor(rest / 10);
  }
  return digits;
}

/** One-hot per digit column over the digit values seen in training (unseen: all zeros). */
function writeDigits(
  out: Float32Array,
  offset: number,
  value: number,
  seen: readonly (readonly number[])[],
): number {
  digitsOf(value).forEach((digit, column) => {
    const values = seen[column] ?? [];
    const position = values.indexOf(digit);
    if (position !== -1) out[offset + position] = 1;
    offset += values.length;
  });
  return offset;
}

/** Class → index maps, built once per manifest vocabulary (merchant names run to 10k+). */
const indexes = memoWeak<readonly string[], Map<string, number>>("fraud.feature-indexes");

function indexOf(classes: readonly string[], value: string): number | undefined {
  let index = indexes.get(classes);
  if (index === undefined) {
    index = new Map(classes.map((name, i) => [name, i]));
    indexes.set(classes, index);
  }
  return index.get(value);
}

/** Label-encodes a value; one the training period never saw (or saw too rarely) is __unknown__. */
function labelIndex(classes: readonly string[], value: string): number {
  return indexOf(classes, value) ?? indexOf(classes, UNKNOWN) ?? -1;
}

function writeEncoded(
  out: Float32Array,
  offset: number,
  value: string,
  column: { classes: readonly string[]; digits: readonly (readonly number[])[] },
): number {
  const index = labelIndex(column.classes, value);
  if (index === -1)
    return offset + column.digits.reduce((width, values) => width + values.length, 0);
  return writeDigits(out, offset, index, column.digits);
}

function writeOneHot(
  out: Float32Array,
  offset: number,
  value: string,
  classes: readonly string[],
): number {
  const index = indexOf(classes, value);
  if (index !== undefined) out[offset + index] = 1;
  return offset + classes.length;
}

const scale = (value: number, min: number, max: number) =>
  max === min ? 0 : (value - min) / (max - min);

/**
 * Writes one transaction's features into `out` at `offset`; returns the next offset.
 *
 * Block order: Merchant State, Zip, Merchant Name, Merchant City, MCC, Use Chip, Errors?, Time,
 * Amount.
 */
export function featurizeInto(
  out: Float32Array,
  offset: number,
  row: TabFormerRow,
  features: FraudFeatures,
): number {
  const start = offset;
  offset = writeEncoded(
    out,
    offset,
    row.merchantState === "" ? MISSING : row.merchantState,
    features.merchantState,
  );
  offset = writeDigits(out, offset, row.zip, features.zip.digits);
  offset = writeEncoded(out, offset, row.merchantName, features.merchantName);
  offset = writeEncoded(out, offset, row.merchantCity, features.merchantCity);
  offset = writeEncoded(out, offset, row.mcc, features.mcc);
  offset = writeOneHot(out, offset, row.useChip, features.useChip.classes);
  offset = writeOneHot(
    out,
    offset,
    row.errors === "" ? MISSING : row.errors,
    features.errors.classes,
  );
  out[offset++] = scale(row.timeMs, features.time.minMs, features.time.maxMs);
  out[offset++] = scale(
    Math.log(Math.max(1, row.amount)),
    features.amount.min,
    features.amount.max,
  );
  if (offset - start !== features.count)
    throw new Error(`featurizer wrote ${offset - start} columns, manifest says ${features.count}`);
  return offset;
}

/** One transaction's feature vector. */
export function featurize(row: TabFormerRow, features: FraudFeatures): Float32Array {
  const out = new Float32Array(features.count);
  featurizeInto(out, 0, row, features);
  return out;
}
