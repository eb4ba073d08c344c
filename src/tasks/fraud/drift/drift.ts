// Score and feature drift of a window's decisions against the model's reference distribution
// (models/<model>/drift-reference.json, from the training generator's world): PSI per monitored
// feature, and a signal naming the ones that crossed the drift threshold.
import { memoMap } from "../../../memos";
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

/** Decisions read per report at most (the window's latest are left out beyond it). */
export const MAX_SAMPLE = 10_000;

/** What a window's drift needs: its stored decisions with the inputs rules read. */
interface DecisionRows {
  backtestRows(
    since: string,
    until: string,
    limit: number,
  ): Promise<readonly { inputs: RuleInputs }[]>;
}

/** The drift of the decisions of [since, until) against `reference`. */
export async function windowDrift(
  stores: DecisionRows,
  reference: Record<string, Reference>,
  since: string,
  until: string,
): Promise<DriftReport> {
  const rows = await stores.backtestRows(since, until, MAX_SAMPLE);
  return driftReport(
    reference,
    rows.map((row) => ({ score: row.inputs.score, inputs: row.inputs })),
  );
}

/** How long /metrics shows one drift report before reading the window again. */
export const METRICS_DRIFT_TTL_MS = 5 * 60_000;

// The last drift report /metrics showed, per model.
const recent = memoMap<string, { at: number; report: Promise<DriftReport> }>("fraud.drift");

/**
 * The drift of the last `windowMs` for /metrics: read again at most every METRICS_DRIFT_TTL_MS
 * (a report reads up to MAX_SAMPLE decisions, too much for every scrape); a failed read is not
 * kept.
 */
export function recentDrift(
  stores: DecisionRows,
  model: string,
  reference: Record<string, Reference>,
  windowMs: number,
  now = Date.now(),
): Promise<DriftReport> {
  const cached = recent.get(model);
  if (cached !== undefined && now - cached.at < METRICS_DRIFT_TTL_MS) return cached.report;
  const report = windowDrift(
    stores,
    reference,
    new Date(now - windowMs).toISOString(),
    new Date(now).toISOString(),
  );
  recent.set(model, { at: now, report });
  report.catch(() => {
    if (recent.get(model)?.report === report) recent.delete(model);
  });
  return report;
}
