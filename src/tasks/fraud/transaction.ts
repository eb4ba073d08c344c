// One card transaction, whatever system reported it: the fraud task's single input shape.
// Payment-provider payloads are mapped onto it (sources/), API callers send it directly.
import { z } from "zod";

/** Earliest and latest plausible transaction times: older data is a bug, later is a forgery. */
const EARLIEST = Date.UTC(1990, 0, 1);
const FUTURE_SLACK_MS = 24 * 60 * 60 * 1000;

export const authorizationMethods = ["chip", "contactless", "swipe", "keyed_in", "online"] as const;

const Timestamp = z
  .union([z.iso.datetime({ offset: true }), z.number().int().positive()])
  .transform((value) => (typeof value === "number" ? value * 1000 : Date.parse(value)))
  .refine((ms) => ms >= EARLIEST, "must not be before 1990")
  .refine((ms) => ms <= Date.now() + FUTURE_SLACK_MS, "must not be in the future");

export const TransactionSchema = z
  .object({
    id: z.string().min(1).max(255),
    card_id: z.string().min(1).max(255),
    /** ISO 8601 with offset, or Unix seconds. */
    timestamp: Timestamp,
    /** Decimal amount in major units (e.g. 134.09 USD); see sources/ for minor-unit payloads. */
    amount: z.number().finite().nonnegative().max(1e9),
    currency: z.string().regex(/^[A-Za-z]{3}$/, "an ISO 4217 code").transform((code) => code.toUpperCase()),
    method: z.enum(authorizationMethods),
    merchant: z
      .object({
        id: z.string().min(1).max(255),
        name: z.string().max(255).optional(),
        city: z.string().max(255).optional(),
        state: z.string().max(255).optional(),
        zip: z.string().regex(/^\d{1,10}$/, "digits only").optional(),
        mcc: z.string().regex(/^\d{4}$/, "a 4-digit merchant category code"),
      })
      .strict(),
    /** Issuer-side errors on the attempt (e.g. "Bad PIN"), as TabFormer names them. */
    errors: z.array(z.string().min(1).max(100)).max(10).default([]),
  })
  .strict();

export type TransactionInput = z.input<typeof TransactionSchema>;
/** A validated transaction; `timestamp` is milliseconds since the epoch (UTC). */
export type Transaction = z.output<typeof TransactionSchema>;

/** ISO 4217 minor-unit exponents that are not 2 (the default). */
const EXPONENTS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
};

/** Converts an integer amount in minor units (cents, yen, fils) to a decimal major-unit amount. */
export function fromMinorUnits(value: number, currency: string): number {
  return value / 10 ** (EXPONENTS[currency.toUpperCase()] ?? 2);
}
