// The cards as the Worker reaches them: one Durable Object per card id (card-history.ts), which
// decides that card's payments in one call.
import type { CardLedgerObject } from "./card-history";
import type { Cards, PaymentEvent } from "./ledger";

export function durableCards(namespace: DurableObjectNamespace<CardLedgerObject>): Cards {
  // getByName: the stub without a DurableObjectId handed to JS (one object less per call).
  const stub = (cardId: string) => namespace.getByName(cardId);
  return {
    decide: (cardId: string, event: PaymentEvent) => stub(cardId).decide(event),
    view: (cardId: string) => stub(cardId).view(),
  };
}
