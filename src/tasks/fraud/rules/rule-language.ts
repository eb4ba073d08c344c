// The rule language: Common Expression Language (CEL, as Kubernetes and Envoy use it; non-Turing
// complete, no code execution) over a payment's rule inputs, type-checked to a bool when a rule
// is written, with parse-time limits that bound what one evaluation can cost.
import { memoSlot } from "../../../memos";
import { Environment } from "@marcbachmann/cel-js";
import { ServiceError } from "../../../errors/service-error";
import type { RuleInputs } from "./rule-inputs";

/** Characters in a rule's expression at most. */
export const MAX_EXPRESSION = 1000;

/** The variables a rule reads, typed (numbers are CEL doubles: `amount > 2000` works). */
function environment(): Environment {
  return new Environment({
    limits: {
      maxAstNodes: 200,
      maxDepth: 16,
      maxListElements: 50,
      maxMapEntries: 0,
      maxCallArguments: 4,
    },
  })
    .registerVariable({
      name: "transaction",
      schema: {
        amount: "double",
        currency: "string",
        method: "string",
        mcc: "string",
        merchant_id: "string",
        merchant_state: "string",
        merchant_city: "string",
        merchant_zip: "string",
        errors: "list<string>",
        hour: "double",
      },
    })
    .registerVariable({
      name: "card",
      schema: {
        id: "string",
        history_count: "double",
        mean_amount: "double",
        max_amount: "double",
        new_merchant: "bool",
        new_mcc: "bool",
        charges_last_hour: "double",
        small_online_last_hour: "double",
      },
    })
    .registerVariable("score", "double")
    .registerVariable("label", "string")
    .registerVariable("provider", "string");
}

// Built once per isolate: every rule is parsed against it.
const shared = memoSlot<Environment>("fraud.rule-language");

export type CompiledRule = (inputs: RuleInputs) => boolean;

/** Parses and type-checks a rule's expression; 400 naming `field` when it is not a bool rule. */
export function compileRule(expression: string, field = "expression"): CompiledRule {
  if (expression.length > MAX_EXPRESSION)
    throw new ServiceError(400, "invalid_request", `At most ${MAX_EXPRESSION} characters`, {
      field,
    });
  shared.value ??= environment();
  let parsed: ReturnType<Environment["parse"]>;
  try {
    parsed = shared.value.parse(expression);
  } catch (error) {
    throw new ServiceError(400, "invalid_request", `Not a valid rule: ${firstLine(error)}`, {
      field,
    });
  }
  const checked = parsed.check();
  if (!checked.valid || checked.type !== "bool")
    throw new ServiceError(
      400,
      "invalid_request",
      checked.valid
        ? `A rule must be a bool expression, this one is ${checked.type}`
        : `Not a valid rule: ${firstLine(checked.error)}`,
      { field },
    );
  return (inputs) => parsed(inputs) === true;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
