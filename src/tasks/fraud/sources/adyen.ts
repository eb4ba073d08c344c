// Adyen standard notifications: the item schema and the AUTHORISATION item as one payment
// (keyed on its pspReference), refused or not, with the card's alias as its identity.
import { z } from "zod";
import { ADYEN_EXPONENTS } from "./adyen-currencies";
import { errorsForRefusal } from "./adyen-refusals";
import { toMajorUnits } from "./minor-units";
import { toTransaction, type SourceEvent } from "./source-event";
import type { MerchantProfile } from "./stripe";

export const NotificationItemSchema = z.object({
  pspReference: z.string().min(1),
  originalReference: z.string().optional(),
  merchantAccountCode: z.string().min(1),
  merchantReference: z.string(),
  amount: z.object({ value: z.number().int().nonnegative(), currency: z.string().length(3) }),
  eventCode: z.string().min(1),
  eventDate: z.string().min(1),
  success: z.enum(["true", "false"]),
  reason: z.string().optional(),
  paymentMethod: z.string().optional(),
  additionalData: z
    .object({
      hmacSignature: z.string().min(1),
      alias: z.string().optional(),
      cardBin: z.string().optional(),
      cardSummary: z.string().optional(),
      expiryDate: z.string().optional(),
      shopperInteraction: z.string().optional(),
    })
    .catchall(z.string()),
});

export const NotificationSchema = z.object({
  live: z.enum(["true", "false"]),
  notificationItems: z
    .array(z.object({ NotificationRequestItem: NotificationItemSchema }))
    .min(1)
    .max(100),
});

export type NotificationItem = z.infer<typeof NotificationItemSchema>;

/**
 * The card's identity: Adyen's `alias` (one per card number) where the notification has it;
 * otherwise BIN + last four + expiry, which two cards can share (same BIN range, same last
 * four, same expiry: roughly 1 in 10,000 cards of one BIN and month), so their histories
 * would merge. Undefined when not even that is present.
 */
export function adyenCardId(data: NotificationItem["additionalData"]): string | undefined {
  if (data.alias) return `adyen:${data.alias}`;
  if (!data.cardSummary || !data.expiryDate) return undefined;
  return `adyen:card:${data.cardBin ?? ""}…${data.cardSummary}/${data.expiryDate}`;
}

/** An AUTHORISATION on our merchant account: approved as Adyen decided, refusals as errors. */
export function fromAuthorisation(item: NotificationItem, merchant: MerchantProfile): SourceEvent {
  const key = `adyen:${item.pspReference}`;
  const cardId = adyenCardId(item.additionalData);
  if (cardId === undefined)
    return {
      kind: "unscored",
      key,
      objectId: item.pspReference,
      reason: "no card identity: none of alias, cardSummary + expiryDate",
    };
  const approved = item.success === "true";
  return toTransaction(
    key,
    {
      id: item.pspReference,
      card_id: cardId,
      timestamp: item.eventDate,
      amount: toMajorUnits(ADYEN_EXPONENTS, item.amount.value, item.amount.currency),
      currency: item.amount.currency,
      method: item.additionalData.shopperInteraction === "POS" ? "chip" : "online",
      merchant: { ...merchant, id: item.merchantAccountCode },
      errors: approved ? [] : errorsForRefusal(item.reason),
    },
    item.pspReference,
    approved,
  );
}
