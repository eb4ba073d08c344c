// A key's ended generations are settled by the next call this isolate makes to the key's Durable
// Object (its next reservation), so a generation costs one call to the object, not two. A
// settlement that no call has carried within SETTLE_DELAY_MS is sent alone.
import type { KeyLimits } from "./api-key";
import type { KeyLimiter } from "./key-limiter";
import type { Admission, Settlement } from "./limit-windows";

/** How long a settlement waits for a call to carry it: how late a refund may be seen. */
export const SETTLE_DELAY_MS = 250;

type Limiter = DurableObjectStub<KeyLimiter>;

// A per-isolate memo, listed in src/isolate.ts: the settlements waiting, by key id. Each is
// sent within SETTLE_DELAY_MS (sendWaiting), so only the last moments' are held.
const waiting = new Map<string, Settlement[]>();

export function holdSettlements(keyId: string, settled: readonly Settlement[]): void {
  if (settled.length === 0) return;
  const list = waiting.get(keyId);
  if (list === undefined) waiting.set(keyId, [...settled]);
  else list.push(...settled);
}

function takeSettlements(keyId: string): Settlement[] {
  const list = waiting.get(keyId) ?? [];
  waiting.delete(keyId);
  return list;
}

/**
 * Admits a request carrying the key's waiting settlements, which the object applies first. When
 * the call fails they wait again (settling an id twice changes nothing).
 */
export async function admitCarrying(
  limiter: Limiter,
  keyId: string,
  request: { id: string; requests: 0 | 1; tokens: number; limits: KeyLimits },
): Promise<Admission> {
  const settled = takeSettlements(keyId);
  try {
    return await limiter.admit({ ...request, settled });
  } catch (error) {
    holdSettlements(keyId, settled);
    throw error;
  }
}

/** After SETTLE_DELAY_MS, sends the key's settlements that no call has carried. */
export async function sendWaiting(limiter: Limiter, keyId: string, limits: KeyLimits) {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_DELAY_MS));
  const settled = takeSettlements(keyId);
  if (settled.length === 0) return;
  try {
    await limiter.settle({ settled, limits });
  } catch (error) {
    holdSettlements(keyId, settled);
    throw error;
  }
}
