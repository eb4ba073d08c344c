// Recording what a signed provider event means: a payment decided once in its card's Durable
// Object (one call: src/cards.ts), or an event that cannot be scored, stored with the reason and
// still acknowledged.
import type { Decision } from "./ledger/decisions";
import type { SourceEvent } from "./sources/source-event";
import type { FraudStores } from "./ledger/ledger";
import type { Services } from "..";
import { fraudContext } from "./context";

export interface Delivered {
  eventId: string;
  provider: "stripe" | "adyen";
  eventType: string;
}

export type Recorded =
  | { scored: true; decision: Decision; duplicate: boolean }
  | { scored: false; reason: string };

/** What the composition root hands the webhooks: the served models and the card ledger. */
export interface WebhookDeps {
  services: Services;
  stores: FraudStores;
}

/**
 * Decides a payment or records the event as not scored; throws (→ non-2xx, retried) only when
 * storing fails.
 */
export async function record(
  env: Env,
  { services, stores }: WebhookDeps,
  delivered: Delivered,
  source: SourceEvent,
  approved: boolean | null = null,
): Promise<Recorded> {
  if (source.kind === "unscored") {
    await stores.recordUnscored({
      ...delivered,
      objectId: source.objectId,
      transactionKey: source.key ?? null,
      reason: source.reason,
      approved,
    });
    return { scored: false, reason: source.reason };
  }
  // The model is checked here (503 until it is ready); the card's object scores with its own.
  const { ledger } = await fraudContext(env, services, stores);
  const { decision, duplicate } = await ledger.decide(source.transaction.card_id, {
    ...delivered,
    transactionKey: source.key,
    transaction: source.transaction,
    ...(source.providerApproved === undefined ? {} : { providerApproved: source.providerApproved }),
  });
  return { scored: true, decision, duplicate };
}
