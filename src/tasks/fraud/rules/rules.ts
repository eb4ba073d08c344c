// Rules on top of the model: each a CEL condition with an action and an order, applied in the
// same decision; every rule that matches is recorded (`rulesTriggered`, as Adyen names it) and
// the first one whose action decides (not `review`) sets the payment's outcome.
import { compileRule, type CompiledRule } from "./rule-language";
import type { RuleInputs } from "./rule-inputs";

export const RULE_ACTIONS = ["allow", "block", "review", "approve", "decline"] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

export interface Rule {
  id: string;
  version: number;
  expression: string;
  action: RuleAction;
  /** Lower first. */
  order: number;
  enabled: boolean;
  description: string;
}

export interface TriggeredRule {
  id: string;
  version: number;
  action: RuleAction;
}

export interface ActiveRule extends Rule {
  matches: CompiledRule;
}

export const activate = (rule: Rule): ActiveRule => ({
  ...rule,
  matches: compileRule(rule.expression),
});

/** Whether an action lets the payment through (undefined: `review`, which only flags it). */
export function approves(action: RuleAction): boolean | undefined {
  if (action === "review") return undefined;
  return action === "allow" || action === "approve";
}

/**
 * The enabled rules that match, in order, and the deciding action (the first that is not
 * review). A rule that fails at evaluation (a value it cannot compare) does not match.
 */
export function applyRules(
  rules: readonly ActiveRule[],
  inputs: RuleInputs,
): { triggered: TriggeredRule[]; action: RuleAction | undefined } {
  const triggered: TriggeredRule[] = [];
  for (const rule of rules.toSorted((a, b) => a.order - b.order || (a.id < b.id ? -1 : 1))) {
    if (!rule.enabled) continue;
    let hit = false;
    try {
      hit = rule.matches(inputs);
    } catch {
      hit = false;
    }
    if (hit) triggered.push({ id: rule.id, version: rule.version, action: rule.action });
  }
  const deciding = triggered.find((rule) => rule.action !== "review");
  const review = triggered.some((rule) => rule.action === "review");
  return { triggered, action: deciding?.action ?? (review ? "review" : undefined) };
}
