// The Fraud tab: replay a sample card's transactions (each scored by POST /v1/fraud/score in the
// context of the ones before it), or build one; the card lookup is fraud-card.ts.
import { postJson } from "./api";
import { byId, element, showError } from "./dom";
import { labelBadge, setUpCardLookup } from "./fraud-card";

interface Transaction {
  id: string;
  card_id: string;
  timestamp: string;
  amount: number;
  currency: string;
  method: "chip" | "contactless" | "swipe" | "keyed_in" | "online";
  merchant: { id: string; mcc: string; name?: string };
}

interface ScoreAnswer {
  model: string;
  model_version: string;
  results: Array<{ score: number; label: string; history_used: number }>;
}

const CARD = "playground-card-1";

/** A card's ordinary week, then a night of card-not-present purchases (as in the README tour). */
const SAMPLE: Array<Omit<Transaction, "card_id" | "currency">> = [
  sample("s1", "2019-09-23T08:12:00Z", 4.5, "chip", "5814", "Corner café"),
  sample("s2", "2019-09-23T18:40:00Z", 62.1, "chip", "5411", "Grocer"),
  sample("s3", "2019-09-25T12:05:00Z", 12.0, "contactless", "5812", "Lunch place"),
  sample("s4", "2019-09-27T19:30:00Z", 48.75, "chip", "5541", "Fuel station"),
  sample("s5", "2019-09-30T17:55:00Z", 71.3, "chip", "5411", "Grocer"),
  sample("s6", "2019-10-01T03:02:00Z", 1999.0, "online", "5732", "Electronics shop"),
  sample("s7", "2019-10-01T03:04:00Z", 1899.0, "online", "5732", "Electronics shop"),
];

function sample(
  id: string,
  timestamp: string,
  amount: number,
  method: Transaction["method"],
  mcc: string,
  name: string,
): Omit<Transaction, "card_id" | "currency"> {
  return { id, timestamp, amount, method, merchant: { id: `merchant-${mcc}`, mcc, name } };
}

export function setUpFraud(): void {
  const rows = byId("fraud-rows", HTMLTableSectionElement);
  const errors = byId("fraud-error", HTMLElement);
  const history: Transaction[] = [];

  async function score(transaction: Transaction) {
    const answer = (await postJson("/v1/fraud/score", {
      accounts: [{ history: history.slice(-49), transaction }],
    })) as ScoreAnswer;
    const result = answer.results[0];
    if (result === undefined) throw new Error("no result");
    history.push(transaction);
    const row = element("tr");
    row.append(
      element("td", transaction.timestamp.replace("T", " ").replace(/:00Z$/, "")),
      element("td", `${transaction.amount.toFixed(2)} ${transaction.currency}`),
      element(
        "td",
        `${transaction.merchant.name ?? transaction.merchant.id} (${transaction.merchant.mcc})`,
      ),
      element("td", transaction.method),
      element("td", result.score.toFixed(3)),
    );
    const label = element("td");
    label.append(labelBadge(result.label));
    row.append(label, element("td", String(result.history_used)));
    rows.append(row);
  }

  byId("fraud-replay", HTMLButtonElement).addEventListener("click", () => {
    void (async () => {
      showError(errors, undefined);
      rows.replaceChildren();
      history.length = 0;
      try {
        for (const entry of SAMPLE) await score({ ...entry, card_id: CARD, currency: "USD" });
      } catch (error) {
        showError(errors, error);
      }
    })();
  });

  byId("fraud-form", HTMLFormElement).addEventListener("submit", (event) => {
    event.preventDefault();
    const value = (id: string) => byId(id, HTMLInputElement).value;
    const when = value("fraud-time");
    void score({
      id: `built-${history.length + 1}`,
      card_id: CARD,
      timestamp: when === "" ? "" : `${when}:00Z`,
      amount: Number(value("fraud-amount")),
      currency: value("fraud-currency"),
      method: byId("fraud-method", HTMLSelectElement).value as Transaction["method"],
      merchant: { id: "merchant-built", mcc: value("fraud-mcc") },
    }).then(
      () => showError(errors, undefined),
      (error: unknown) => showError(errors, error),
    );
  });

  setUpCardLookup();
}
