// Adyen refusal reasons in the fraud model's error vocabulary (IBM TabFormer's `Errors?`): a
// refused AUTHORISATION is a declined attempt, the signal card-testing leaves behind.
const ERRORS: Readonly<Record<string, string>> = {
  "cvc declined": "Bad CVV",
  "expired card": "Bad Expiration",
  "invalid card number": "Bad Card Number",
  "not enough balance": "Insufficient Balance",
  "withdrawal amount exceeded": "Insufficient Balance",
  "invalid pin": "Bad PIN",
  "pin tries exceeded": "Bad PIN",
  "incorrect online pin": "Bad PIN",
  "avs declined": "Bad Zipcode",
  "acquirer error": "Technical Glitch",
  "issuer unavailable": "Technical Glitch",
};

/**
 * The model's errors for a refusal reason (Adyen sends it in `reason`, sometimes with a suffix).
 *
 * Reasons without an equivalent (e.g. "Refused", "FRAUD", "Blocked Card") add no error: the attempt
 * still counts as declined.
 */
export function errorsForRefusal(reason: string | undefined): string[] {
  if (reason === undefined) return [];
  const normalized = reason.trim().toLowerCase();
  const match = Object.entries(ERRORS).find(([known]) => normalized.startsWith(known));
  return match === undefined ? [] : [match[1]];
}
