// A key's ended generations are settled by the next call this isolate makes to the key's Durable
// Object (its next reservation), so a generation costs one call to the object, not two, while
// the key's reservations come within SETTLE_DELAY_MS of each other. A settlement that no call
// has carried within SETTLE_DELAY_MS is sent alone; a key's lone generation sends it at once.
import { memoMap } from "../../memos";
import type { KeyLimits } from "./api-key";
import type { KeyLimiter } from "./key-limiter";
import type { Admission, Settlement } from "./limit-windows";

/** How long a settlement waits for a call to carry it: how late a refund may be seen. */
export const SETTLE_DELAY_MS = 250;

type Limiter = DurableObjectStub<KeyLimiter>;

// The settlements waiting, by key id (each sent within SETTLE_DELAY_MS, so only the last moments'
// are held); when each key last reserved, and whether within SETTLE_DELAY_MS of the one before
// (4,096 keys at most).
const waiting = memoMap<string, Settlement[]>("keys.settlements");
const reserved = memoMap<string, { at: number; burst: boolean }>("keys.reservations");

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
  now = Date.now(),
): Promise<Admission> {
  const last = reserved.get(keyId);
  if (last === undefined && reserved.size >= 4096) reserved.clear();
  reserved.set(keyId, { at: now, burst: last !== undefined && now - last.at < SETTLE_DELAY_MS });
  const settled = takeSettlements(keyId);
  try {
    return await limiter.admit({ ...request, settled });
  } catch (error) {
    holdSettlements(keyId, settled);
    throw error;
  }
}

/**
 * Settles an ended generation: held for the key's next reservation when its reservations follow
 * each other (sent alone after SETTLE_DELAY_MS if none comes), else sent at once, while the
 * isolate is still busy with the answer rather than woken again later.
 */
export async function settleEnded(
  limiter: Limiter,
  keyId: string,
  limits: KeyLimits,
  settlement: Settlement,
): Promise<void> {
  holdSettlements(keyId, [settlement]);
  if (reserved.get(keyId)?.burst === true) await sendWaiting(limiter, keyId, limits, settlement.id);
  else await send(limiter, keyId, limits);
}

/**
 * After SETTLE_DELAY_MS, sends the key's settlements that no call has carried: when `id` is
 * given, only if that one is still waiting (a later generation's is left to its own request,
 * as the key's next reservation may yet carry it).
 */
export async function sendWaiting(limiter: Limiter, keyId: string, limits: KeyLimits, id?: string) {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_DELAY_MS));
  if (id !== undefined && waiting.get(keyId)?.some((each) => each.id === id) !== true) return;
  await send(limiter, keyId, limits);
}

async function send(limiter: Limiter, keyId: string, limits: KeyLimits): Promise<void> {
  const settled = takeSettlements(keyId);
  if (settled.length === 0) return;
  try {
    await limiter.settle({ settled, limits });
  } catch (error) {
    holdSettlements(keyId, settled);
    throw error;
  }
}
