// Outcomes: what providers report later about a payment (a dispute, an early fraud warning, a
// chargeback, a notification of fraud), mapped onto the payment's key so it labels its decision.
import { z } from "zod";
import type { NotificationItem } from "../sources/adyen";

export const OUTCOME_KINDS = [
  "dispute",
  "early_fraud_warning",
  "chargeback",
  "notification_of_fraud",
] as const;

export interface Outcome {
  /** The provider's event id: redeliveries share it, so one row per event whatever happens. */
  eventId: string;
  provider: "stripe" | "adyen";
  /** The payment's key, as its decision has it: `stripe:ch_…`, `adyen:<pspReference>`. */
  transactionKey: string;
  kind: (typeof OUTCOME_KINDS)[number];
  /** Whether the outcome says the payment was fraud. */
  fraudulent: boolean;
  reason: string | null;
  reportedAt: string;
}

/**
 * Card network reason codes that mean fraud: Visa 10.x, Mastercard 4837/4840/4849/4863/4870/4871,
 * American Express F24/F29/F30/F31/FR2/FR4/FR6, Discover UA01/UA02/UA05/UA06.
 */
const FRAUD_NETWORK_CODES =
  /^(10\.\d|4837|4840|4849|4863|4870|4871|F24|F29|F30|F31|FR2|FR4|FR6|UA0[1256])$/;

export const isFraudNetworkCode = (code: string | undefined | null) =>
  code != null && FRAUD_NETWORK_CODES.test(code.trim());

export const StripeDisputeSchema = z.object({
  id: z.string().min(1),
  charge: z.string().min(1),
  created: z.number().int().positive(),
  reason: z.string().min(1),
  payment_method_details: z
    .object({ card: z.object({ network_reason_code: z.string().nullish() }).nullish() })
    .nullish(),
});

export const StripeEarlyFraudWarningSchema = z.object({
  id: z.string().min(1),
  charge: z.string().min(1),
  created: z.number().int().positive(),
  fraud_type: z.string().min(1),
});

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** charge.dispute.created: fraud when Stripe's reason is `fraudulent` or the network's code is. */
export function fromStripeDispute(
  eventId: string,
  dispute: z.infer<typeof StripeDisputeSchema>,
): Outcome {
  const code = dispute.payment_method_details?.card?.network_reason_code;
  return {
    eventId,
    provider: "stripe",
    transactionKey: `stripe:${dispute.charge}`,
    kind: "dispute",
    fraudulent: dispute.reason === "fraudulent" || isFraudNetworkCode(code),
    reason: code ? `${dispute.reason} (${code})` : dispute.reason,
    reportedAt: iso(dispute.created),
  };
}

/** radar.early_fraud_warning.created: the issuer reports fraud, whatever its fraud_type. */
export function fromStripeEarlyFraudWarning(
  eventId: string,
  warning: z.infer<typeof StripeEarlyFraudWarningSchema>,
): Outcome {
  return {
    eventId,
    provider: "stripe",
    transactionKey: `stripe:${warning.charge}`,
    kind: "early_fraud_warning",
    fraudulent: true,
    reason: warning.fraud_type,
    reportedAt: iso(warning.created),
  };
}

/** Adyen event codes that carry an outcome of an earlier payment (its originalReference). */
export const ADYEN_OUTCOME_CODES = ["CHARGEBACK", "NOTIFICATION_OF_FRAUD"] as const;

/**
 * A CHARGEBACK (fraud when its reason code, `additionalData.chargebackReasonCode`, is a fraud
 * code or its reason says so) or a NOTIFICATION_OF_FRAUD (always fraud), for the payment its
 * originalReference names; undefined for other items or one without originalReference.
 */
export function fromAdyenItem(item: NotificationItem): Outcome | undefined {
  const original = item.originalReference;
  if (original === undefined || original === "") return undefined;
  const base = {
    eventId: `${item.pspReference}:${item.eventCode}`,
    provider: "adyen" as const,
    transactionKey: `adyen:${original}`,
    reportedAt: new Date(Date.parse(item.eventDate) || Date.now()).toISOString(),
  };
  if (item.eventCode === "NOTIFICATION_OF_FRAUD")
    return {
      ...base,
      kind: "notification_of_fraud",
      fraudulent: true,
      reason: item.reason ?? null,
    };
  if (item.eventCode !== "CHARGEBACK") return undefined;
  const code = item.additionalData.chargebackReasonCode;
  const reason = item.reason ?? null;
  return {
    ...base,
    kind: "chargeback",
    fraudulent: isFraudNetworkCode(code) || /fraud/i.test(reason ?? ""),
    reason: code ? `${reason ?? ""} (${code})`.trim() : reason,
  };
}
