// TabFormer rows as the fraud fixtures store them (scripts/fraud/fixtures.py), and the same
// transaction as an API caller or webhook sends it. Shared by the Node and workerd tests.
import { z } from "zod";
import type { TransactionInput } from "../../src/tasks/fraud/transaction";

export const RawRowSchema = z.object({
  User: z.coerce.string(),
  Card: z.coerce.string(),
  Year: z.number().int(),
  Month: z.number().int(),
  Day: z.number().int(),
  Time: z.string().regex(/^\d\d:\d\d$/),
  Amount: z.string(),
  "Use Chip": z.string(),
  "Merchant Name": z.coerce.string(),
  "Merchant City": z.string(),
  "Merchant State": z.string().nullish(),
  Zip: z.coerce.string().nullish(),
  MCC: z.coerce.number().int(),
  "Errors?": z.string().nullish(),
});
export type RawRow = z.infer<typeof RawRowSchema>;

/** TabFormer's wall-clock fields, read as UTC. */
export function rawTimeMs(raw: RawRow): number {
  const [hours, minutes] = raw.Time.split(":").map(Number);
  return Date.UTC(raw.Year, raw.Month - 1, raw.Day, hours, minutes);
}

/** The row as an API transaction (TabFormer's three Use Chip values map onto methods). */
export function toTransactionInput(raw: RawRow, id: string): TransactionInput {
  const method =
    raw["Use Chip"] === "Swipe Transaction"
      ? "swipe"
      : raw["Use Chip"] === "Online Transaction"
        ? "online"
        : "chip";
  return {
    id,
    card_id: `${raw.User}-${raw.Card}`,
    timestamp: new Date(rawTimeMs(raw)).toISOString(),
    amount: Number.parseFloat(raw.Amount.replace("$", "")),
    currency: "USD",
    method,
    merchant: {
      id: raw["Merchant Name"],
      city: raw["Merchant City"],
      ...(raw["Merchant State"] ? { state: raw["Merchant State"] } : {}),
      ...(raw.Zip ? { zip: raw.Zip } : {}),
      mcc: String(raw.MCC).padStart(4, "0"),
    },
    errors: raw["Errors?"] ? raw["Errors?"].split(",") : [],
  };
}
