// Adyen standard notifications: per-item HMAC-SHA256 (hex key, base64 result) over Adyen's
// signing string, and the AUTHORISATION item mapped onto a Transaction.
import { z } from "zod";
import { fromMinorUnits, TransactionSchema, type Transaction } from "../transaction";
import type { MerchantProfile } from "./stripe";

export const NotificationItemSchema = z.object({
  pspReference: z.string().min(1),
  originalReference: z.string().optional(),
  merchantAccountCode: z.string().min(1),
  merchantReference: z.string(),
  amount: z.object({ value: z.number().int().nonnegative(), currency: z.string().length(3) }),
  eventCode: z.string().min(1),
  eventDate: z.iso.datetime({ offset: true }),
  success: z.enum(["true", "false"]),
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
  notificationItems: z.array(z.object({ NotificationRequestItem: NotificationItemSchema })).min(1).max(100),
});

export type NotificationItem = z.infer<typeof NotificationItemSchema>;

/** Adyen's signing string: fixed fields joined by ':' (missing ones empty). */
export function signingString(item: NotificationItem): string {
  return [
    item.pspReference, item.originalReference ?? "", item.merchantAccountCode, item.merchantReference,
    String(item.amount.value), item.amount.currency, item.eventCode, item.success,
  ].join(":");
}

function hexToBytes(hex: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) return undefined;
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/** Verifies one item's hmacSignature in constant time; a malformed key verifies nothing. */
export async function verifyItem(item: NotificationItem, hexKey: string): Promise<boolean> {
  const keyBytes = hexToBytes(hexKey);
  if (keyBytes === undefined) return false;
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(signingString(item))));
  let presented: Uint8Array;
  try {
    presented = Uint8Array.from(atob(item.additionalData.hmacSignature), (char) => char.charCodeAt(0));
  } catch {
    return false;
  }
  return presented.length === expected.length && crypto.subtle.timingSafeEqual(presented, expected);
}

/** An AUTHORISATION on our merchant account as a transaction; the card is its alias. */
export function fromAuthorisation(item: NotificationItem, merchant: MerchantProfile): Transaction {
  const data = item.additionalData;
  const card = data.alias ?? `${data.cardBin ?? ""}…${data.cardSummary ?? ""}/${data.expiryDate ?? ""}`;
  const present = data.shopperInteraction === "POS";
  return TransactionSchema.parse({
    id: item.pspReference,
    card_id: `adyen:${card}`,
    timestamp: item.eventDate,
    amount: fromMinorUnits(item.amount.value, item.amount.currency),
    currency: item.amount.currency,
    method: present ? "chip" : "online",
    merchant: { ...merchant, id: item.merchantAccountCode },
    errors: [],
  });
}
