// A payment's fraud decision: once per payment (however many events describe it), scored
// against the card's history before it, and committed with its history entry and event id in
// one transaction of the card's Durable Object before anyone is answered. It runs inside that
// object (src/cards.ts), so the Worker makes one call per payment.
import type { Decision } from "./ledger/decisions";
import type { CardLedger, Decided, Delivery, PaymentEvent } from "./ledger/ledger";
import { reasonsFor } from "./reasons";
import { ruleInputs } from "./rules/rule-inputs";
import { type ActiveRule, applyRules, approves } from "./rules/rules";
import type { FraudScorer } from "./scoring";

/** Times a decision is scored again because the card's history changed under it. */
const MAX_RESCORES = 3;

/**
 * Decides once per payment. A later event of a decided payment (a duplicate, a retry, or
 * charge.captured after charge.succeeded) reads the first decision back (`duplicate: true`).
 * Any failure throws before anything is stored, so the caller answers non-2xx and the
 * provider retries.
 */
export async function decide(
  scorer: FraudScorer,
  ledger: CardLedger,
  event: PaymentEvent,
  rules: readonly ActiveRule[] = [],
): Promise<Decided> {
  const { transaction } = event;
  const delivery: Delivery = {
    eventId: event.eventId,
    eventType: event.eventType,
    provider: event.provider,
    transactionKey: event.transactionKey,
  };
  for (let attempt = 0; ; attempt++) {
    const prepared = await ledger.prepare(
      transaction.card_id,
      delivery,
      transaction.timestamp,
      scorer.manifest.window - 1,
    );
    if (prepared.decided !== undefined) return { decision: prepared.decided, duplicate: true };
    const result = await scorer.explain({ history: prepared.history, current: transaction });
    const inputs = ruleInputs(
      transaction,
      prepared.history,
      result.score,
      result.label,
      event.provider,
    );
    const ruled = applyRules(rules, inputs);
    const ruleApproves = ruled.action === undefined ? undefined : approves(ruled.action);
    const decision: Decision = {
      transactionKey: event.transactionKey,
      eventId: event.eventId,
      provider: event.provider,
      eventType: event.eventType,
      transactionId: transaction.id,
      cardId: transaction.card_id,
      score: result.score,
      label: result.label,
      approved: event.providerApproved ?? ruleApproves ?? result.label !== "FRAUD",
      decidedBy: event.providerApproved === undefined ? "model" : "provider",
      model: scorer.manifest.name,
      modelVersion: scorer.manifest.version,
      historyLength: result.historyUsed,
      transactionAt: new Date(transaction.timestamp).toISOString(),
      decidedAt: new Date().toISOString(),
      reasons: reasonsFor(result, transaction, prepared.history),
      baselineScore: result.baseline,
      rulesTriggered: ruled.triggered,
      ...(ruled.action === undefined ? {} : { ruleAction: ruled.action }),
      ruleInputs: inputs,
    };
    // Another payment of the card committed meanwhile: score again with it in the history.
    const committed = await ledger.commit(
      transaction.card_id,
      delivery,
      transaction,
      decision,
      attempt < MAX_RESCORES ? prepared.version : null,
    );
    if (!("stale" in committed)) return committed;
  }
}
