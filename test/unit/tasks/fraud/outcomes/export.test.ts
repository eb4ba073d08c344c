// The export's CSV is the trainer's own format: the generator's header, the columns the
// trainer reads (scripts/fraud/features.py), and TabFormer's spelling of each field.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TABFORMER_HEADER, tabFormerLine } from "../../../../../src/tasks/fraud/outcomes/export";
import { ruleInputs } from "../../../../../src/tasks/fraud/rules/rule-inputs";

describe("the labelled export", () => {
  it("has the generator's header and the trainer's columns", () => {
    expect(readFileSync("scripts/fraud/generate.mjs", "utf8")).toContain(
      TABFORMER_HEADER.slice(0, 60),
    );
    const columns = /COLUMNS = \[([^\]]+)\]/s.exec(
      readFileSync("scripts/fraud/features.py", "utf8"),
    );
    const trainer = [...(columns?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    expect(TABFORMER_HEADER.split(",")).toEqual(trainer);
  });

  it("spells a row as TabFormer does, quoting a field with commas", () => {
    const current = {
      id: "t",
      card_id: "c1",
      timestamp: Date.UTC(2019, 9, 1, 3, 5),
      amount: 1999,
      currency: "USD",
      method: "swipe" as const,
      merchant: { id: "-123", city: "Richmond", state: "VA", zip: "23229", mcc: "0742" },
      errors: ["Bad PIN", "Bad CVV"],
    };
    const line = tabFormerLine({
      cardId: "c1",
      transactionAt: new Date(current.timestamp).toISOString(),
      inputs: ruleInputs(current, [], 0.1, "LEGIT", "stripe"),
      fraudulent: 1,
    });
    expect(line).toBe(
      'c1,0,2019,10,1,03:05,$1999.00,Swipe Transaction,-123,Richmond,VA,23229,742,"Bad PIN,Bad CVV",Yes',
    );
  });
});
