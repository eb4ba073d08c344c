// What a provider's event means for the fraud task: a card transaction to decide once (keyed
// on the provider's own transaction id), or an event recorded as not scored, with the reason.
import type { z } from "zod";
import { TransactionSchema, type Transaction, type TransactionInput } from "../transaction";

export type SourceEvent =
  | {
      kind: "transaction";
      /**
       * One key per payment, however many events describe it: `stripe:ch_…`, `stripe:iauth_…`,
       * `adyen:<pspReference>`.
       */
      key: string;
      transaction: Transaction;
      /**
       * The provider's own outcome for notifications of a decided payment; absent when we decide
       * (Issuing).
       */
      providerApproved?: boolean;
    }
  | {
      kind: "unscored";
      reason: string;
      /** The provider's id of the object the event describes. */
      objectId: string;
      /** The transaction it belongs to, where known (a PaymentIntent's latest charge). */
      key?: string;
    };

/** A transaction from a provider payload, or the reason it is not one (the first failing field). */
export function toTransaction(
  key: string,
  input: TransactionInput,
  objectId: string,
  providerApproved?: boolean,
): SourceEvent {
  const parsed = TransactionSchema.safeParse(input);
  if (parsed.success)
    return {
      kind: "transaction",
      key,
      transaction: parsed.data,
      ...(providerApproved === undefined ? {} : { providerApproved }),
    };
  return { kind: "unscored", objectId, key, reason: describe(parsed.error) };
}

/** A zod failure as one line naming the first failing field. */
export function describe(error: z.ZodError): string {
  const [issue] = error.issues;
  const field = issue?.path.map(String).join(".") || "body";
  return `${field}: ${issue?.message ?? "invalid"}`;
}
