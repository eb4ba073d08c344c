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
    /** Decimal amount in major units (e.g. 134.09 USD); sources/ convert each provider's minor
     *  units. Large amounts are real (VND 1,500,000,000 ≈ USD 60,000): bounded only to stay an
     *  exact double. */
    amount: z.number().finite().nonnegative().max(1e15),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/, "an ISO 4217 code")
      .transform((code) => code.toUpperCase()),
    method: z.enum(authorizationMethods),
    merchant: z
      .object({
        id: z.string().min(1).max(255),
        name: z.string().max(255).optional(),
        city: z.string().max(255).optional(),
        state: z.string().max(255).optional(),
        zip: z
          .string()
          .regex(/^\d{1,10}$/, "digits only")
          .optional(),
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
