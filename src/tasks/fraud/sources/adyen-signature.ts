// Adyen's per-item HMAC-SHA256 (hex key, base64 result) over its signing string. The key is
// imported once per isolate per configured value, not per notification item.
import { keep } from "../../../memos";
import type { NotificationItem } from "./adyen";
import { hmacKeys } from "./hmac-keys";

/** Adyen's signing string: fixed fields joined by ':' (missing ones empty). */
export function signingString(item: NotificationItem): string {
  return [
    item.pspReference,
    item.originalReference ?? "",
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount.value),
    item.amount.currency,
    item.eventCode,
    item.success,
  ].join(":");
}

function hexToBytes(hex: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) return undefined;
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

const keys = hmacKeys(hexToBytes);
keep("fraud.adyen-keys", keys, { entries: keys.entries, clear: keys.clear });

/** The imported HMAC key for a configured hex value (undefined when it is not hex), memoized. */
export const hmacKey = (hex: string) => keys.key(hex);

/** How many keys this isolate has imported (tests hold it to one per configured value). */
export const hmacKeyImports = () => keys.imports();

/** Verifies one item's hmacSignature in constant time; a malformed key verifies nothing. */
export async function verifyItem(item: NotificationItem, hexKey: string): Promise<boolean> {
  const key = await hmacKey(hexKey);
  if (key === undefined) return false;
  const expected = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(signingString(item))),
  );
  let presented: Uint8Array;
  try {
    presented = Uint8Array.from(atob(item.additionalData.hmacSignature), (char) =>
      char.charCodeAt(0),
    );
  } catch {
    return false;
  }
  return presented.length === expected.length && crypto.subtle.timingSafeEqual(presented, expected);
}
