// The rule language and its application: CEL conditions type-checked to bool when written
// (400 naming the field otherwise), bounded by parse-time limits, applied in order with the
// first deciding action winning and every match recorded.
import { describe, expect, it } from "vitest";
import { ServiceError } from "../../../../../src/errors/service-error";
import { ruleInputs } from "../../../../../src/tasks/fraud/rules/rule-inputs";
import { compileRule } from "../../../../../src/tasks/fraud/rules/rule-language";
import { activate, applyRules, type Rule } from "../../../../../src/tasks/fraud/rules/rules";
import type { Transaction } from "../../../../../src/tasks/fraud/transaction";

const T = Date.UTC(2019, 9, 1, 3, 0);
const transaction = (over: Partial<Transaction> = {}): Transaction => ({
  id: "t",
  card_id: "c",
  timestamp: T,
  amount: 2500,
  currency: "USD",
  method: "online",
  merchant: { id: "m-new", mcc: "5732" },
  errors: [],
  ...over,
});
const history = [
  transaction({
    id: "h1",
    timestamp: T - 86_400_000,
    amount: 40,
    method: "chip",
    merchant: { id: "m1", mcc: "5411" },
  }),
];
const inputs = ruleInputs(transaction(), history, 0.42, "SUSPECT", "stripe");

const rule = (id: string, expression: string, action: Rule["action"], order: number): Rule => ({
  id,
  version: 1,
  expression,
  action,
  order,
  enabled: true,
  description: "",
});

describe("fraud rules", () => {
  it("reads the transaction, the card's aggregates and the score", () => {
    expect(inputs.card).toMatchObject({ history_count: 1, new_merchant: true, new_mcc: true });
    expect(inputs.transaction.hour).toBe(3);
    const big = compileRule(
      'transaction.amount > 2000.0 && card.new_merchant && transaction.method == "online"',
    );
    expect(big(inputs)).toBe(true);
    expect(compileRule("score >= 0.5 || transaction.hour < 6")(inputs)).toBe(true);
    expect(compileRule('"Bad CVV" in transaction.errors')(inputs)).toBe(false);
  });

  it.each([
    ["transaction.amount", "A rule must be a bool expression"],
    ['transaction.amount == "big"', "Not a valid rule"],
    ["transaction.nope > 1.0", "Not a valid rule"],
    ["process.exit()", "Not a valid rule"],
    ["(".repeat(40) + "true" + ")".repeat(40), "Not a valid rule"],
    ["x".repeat(1001), "At most 1000 characters"],
  ])("refuses %s with 400 naming the field", (expression, detail) => {
    let error: unknown;
    try {
      compileRule(expression, "rule.expression");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 400, field: "rule.expression" });
    expect((error as ServiceError).message).toContain(detail);
  });

  it("records every match in order; the first that is not review decides", () => {
    const rules = [
      rule("z-review", "score > 0.3", "review", 1),
      rule("big-online", "transaction.amount > 2000.0", "decline", 2),
      rule("allow-known", "!card.new_merchant", "allow", 0),
      rule("late", "score > 0.0", "approve", 3),
    ].map(activate);
    const { triggered, action } = applyRules(rules, inputs);
    expect(triggered.map((t) => t.id)).toEqual(["z-review", "big-online", "late"]);
    expect(action).toBe("decline");
    expect(applyRules([rules[0]!], inputs).action).toBe("review");
    expect(applyRules([], inputs)).toEqual({ triggered: [], action: undefined });
  });
});
