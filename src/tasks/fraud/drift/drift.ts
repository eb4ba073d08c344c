// Score and feature drift of a window's decisions against the model's reference distribution
// (models/<model>/drift-reference.json, from the training generator's world): PSI per monitored
// feature, and a signal naming the ones that crossed the drift threshold.
import type { RuleInputs } from "../rules/rule-inputs";
import { binShares, type DriftStatus, psi, type Reference, statusOf } from "./psi";

/** The monitored features and how each is read from a stored decision. */
export const MONITORED: Record<
  string,
  (row: { score: number; inputs: RuleInputs }) => number | string
> = {
  score: (row) => row.score,
  log_amount: (row) => Math.log(Math.max(1, row.inputs.transaction.amount)),
  hour: (row) => row.inputs.transaction.hour,
  method: (row) => row.inputs.transaction.method,
  history_count: (row) => row.inputs.card.history_count,
};

export interface DriftReport {
  /** Decisions in the window; below MIN_SAMPLE the report says so and raises nothing. */
  sample: number;
  features: Record<string, { psi: number; status: DriftStatus }>;
  /** The features at or above the drift threshold (empty: no signal). */
  drifted: string[];
}

/** Decisions needed before PSI means anything (about 10 per reference bin). */
export const MIN_SAMPLE = 100;

export function driftReport(
  reference: Record<string, Reference>,
  rows: readonly { score: number; inputs: RuleInputs }[],
): DriftReport {
  const features: DriftReport["features"] = {};
  for (const [name, read] of Object.entries(MONITORED)) {
    const ref = reference[name];
    if (ref === undefined) continue;
    const value = psi(ref.shares, binShares(ref, rows.map(read)));
    features[name] = { psi: Math.round(value * 1e4) / 1e4, status: statusOf(value) };
  }
  const drifted =
    rows.length < MIN_SAMPLE
      ? []
      : Object.entries(features)
          .filter(([, feature]) => feature.status === "drift")
          .map(([name]) => name);
  return { sample: rows.length, features, drifted };
}
