// The Fraud tab's card lookup: a card's stored history and decisions (GET /v1/fraud/cards/{card},
// written by the payment webhooks), each as a table.
import { call } from "./api";
import { byId, element, showError } from "./dom";

interface CardView {
  card_id: string;
  history: Array<{
    id: string;
    timestamp: string;
    amount: number;
    currency: string;
    method: string;
    merchant: { id: string; name?: string; mcc: string };
  }>;
  decisions: Array<{
    transactionId: string;
    eventType: string;
    score: number;
    label: string;
    approved: boolean;
    decidedBy: string;
    historyLength: number;
  }>;
}

function table(caption: string, head: string[], rows: Array<Array<string | HTMLElement>>) {
  const box = element("div", "", { class: "scroll" });
  const grid = element("table");
  const header = element("tr");
  header.append(...head.map((name) => element("th", name, { scope: "col" })));
  grid.append(element("caption", caption), element("thead"), element("tbody"));
  grid.tHead?.append(header);
  for (const cells of rows) {
    const row = element("tr");
    for (const cell of cells) {
      const td = element("td");
      td.append(cell);
      row.append(td);
    }
    grid.tBodies[0]?.append(row);
  }
  box.append(grid);
  return box;
}

export function labelBadge(label: string): HTMLElement {
  return element("span", label, { class: `label-${label.toLowerCase()}` });
}

function render(card: CardView): HTMLElement[] {
  return [
    table(
      `${card.card_id}: stored history (${card.history.length})`,
      ["time", "amount", "merchant", "method", "transaction"],
      card.history.map((entry) => [
        entry.timestamp,
        `${entry.amount.toFixed(2)} ${entry.currency}`,
        `${entry.merchant.name ?? entry.merchant.id} (${entry.merchant.mcc})`,
        entry.method,
        entry.id,
      ]),
    ),
    table(
      `Decisions (${card.decisions.length})`,
      ["transaction", "event", "score", "label", "approved", "decided by", "history used"],
      card.decisions.map((decision) => [
        decision.transactionId,
        decision.eventType,
        decision.score.toFixed(3),
        labelBadge(decision.label),
        decision.approved ? "yes" : "no",
        decision.decidedBy,
        String(decision.historyLength),
      ]),
    ),
  ];
}

export function setUpCardLookup(): void {
  const output = byId("fraud-card", HTMLElement);
  const errors = byId("fraud-card-error", HTMLElement);
  byId("fraud-card-form", HTMLFormElement).addEventListener("submit", (event) => {
    event.preventDefault();
    const card = byId("fraud-card-id", HTMLInputElement).value;
    output.replaceChildren();
    void call(`/v1/fraud/cards/${encodeURIComponent(card)}`).then(
      async (response) => {
        showError(errors, undefined);
        output.replaceChildren(...render((await response.json()) as CardView));
      },
      (error: unknown) => showError(errors, error),
    );
  });
}
