// Labelled decisions in the trainer's format: TabFormer's CSV as scripts/fraud/generate.mjs
// writes it and scripts/fraud/train.py reads it, one row per decided payment (ordered per card,
// then by time), `Is Fraud?` from the payment's outcomes.
import type { RuleInputs } from "../rules/rule-inputs";

export const TABFORMER_HEADER =
  "User,Card,Year,Month,Day,Time,Amount,Use Chip,Merchant Name,Merchant City,Merchant State," +
  "Zip,MCC,Errors?,Is Fraud?";

export interface ExportRow {
  cardId: string;
  transactionAt: string;
  inputs: RuleInputs;
  /** 1: an outcome called the payment fraud. */
  fraudulent: number | null;
}

const USE_CHIP: Record<string, string> = {
  chip: "Chip Transaction",
  contactless: "Chip Transaction",
  swipe: "Swipe Transaction",
  keyed_in: "Online Transaction",
  online: "Online Transaction",
};

/** A CSV field, quoted when it holds a comma, a quote or a line break. */
const field = (value: string) =>
  /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;

export function tabFormerLine(row: ExportRow): string {
  const at = new Date(row.transactionAt);
  const t = row.inputs.transaction;
  const two = (n: number) => String(n).padStart(2, "0");
  return [
    row.cardId,
    "0",
    String(at.getUTCFullYear()),
    String(at.getUTCMonth() + 1),
    String(at.getUTCDate()),
    `${two(at.getUTCHours())}:${two(at.getUTCMinutes())}`,
    `$${t.amount.toFixed(2)}`,
    USE_CHIP[t.method] ?? "Chip Transaction",
    t.merchant_id,
    t.merchant_city,
    t.merchant_state,
    t.merchant_zip ?? "",
    String(Number(t.mcc)),
    t.errors.join(","),
    row.fraudulent === 1 ? "Yes" : "No",
  ]
    .map(field)
    .join(",");
}
