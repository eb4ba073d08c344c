// The card's Durable Object as the Worker binds it (CARD_HISTORY): the card's ledger
// (tasks/fraud/ledger) and its decisions, made inside the object with the isolate's fraud model
// and the enabled rules, so a payment costs the Worker one call and the history never leaves
// the object.
import { isolate } from "./isolate";
import { fraudScorer } from "./tasks/fraud/context";
import { decide } from "./tasks/fraud/decide";
import { CardLedgerObject } from "./tasks/fraud/ledger/card-history";
import type { Decided, PaymentEvent } from "./tasks/fraud/ledger/ledger";
import { activeRules } from "./tasks/fraud/rules/rule-store";

export class CardHistory extends CardLedgerObject {
  async decide(event: PaymentEvent): Promise<Decided> {
    const [scorer, rules] = await Promise.all([
      fraudScorer(this.env, isolate.services()),
      activeRules(this.env.DB),
    ]);
    return decide(scorer, this.ledger(), event, rules);
  }
}
