// Failed authentications in this isolate, counted by reason for /metrics. The presented key is
// never kept or logged: only why it failed.
import { memoMap } from "../../memos";

export const AUTH_FAILURE_REASONS = [
  "missing",
  "malformed",
  "unknown",
  "revoked",
  "not_configured",
  "insufficient_scope",
] as const;

export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

const counts = memoMap<AuthFailureReason, number>("keys.auth-failures");

export function countAuthFailure(reason: AuthFailureReason): void {
  counts.set(reason, (counts.get(reason) ?? 0) + 1);
}

/** Every reason with its count (zero included, so a Prometheus series exists from the start). */
export function authFailures(): Array<[AuthFailureReason, number]> {
  return AUTH_FAILURE_REASONS.map((reason) => [reason, counts.get(reason) ?? 0]);
}
