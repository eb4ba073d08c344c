// Bytes as lowercase hex, two digits each (digests, signatures, ids).

/** Each byte's two digits, made once. */
const DIGITS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  // One string built up from the table: no array or string per byte (a Stripe signature's
  // 32 bytes are hexed on every webhook).
  let hex = "";
  for (const byte of new Uint8Array(bytes)) hex += DIGITS[byte];
  return hex;
}
