// Population stability index (PSI) of a live sample against a reference distribution, over the
// reference's bins: Σ (live − ref) · ln(live / ref), with empty bins floored at EPSILON. The
// usual reading, adopted here: < 0.1 stable, 0.1–0.25 moderate shift, ≥ 0.25 drift.
export const PSI_MODERATE = 0.1;
export const PSI_DRIFT = 0.25;
const EPSILON = 1e-4;

export type DriftStatus = "stable" | "moderate" | "drift";

/** A reference: numeric bins by upper edges (the last bin is open), or categories. */
export type Reference =
  | { kind: "numeric"; edges: number[]; shares: number[] }
  | { kind: "categorical"; categories: string[]; shares: number[] };

/** The share of `values` in each of the reference's bins (other categories: the last bin). */
export function binShares(reference: Reference, values: readonly (number | string)[]): number[] {
  const counts = new Array<number>(reference.shares.length).fill(0);
  for (const value of values) {
    let bin: number;
    if (reference.kind === "numeric") {
      const x = Number(value);
      bin = reference.edges.findIndex((edge) => x <= edge);
      if (bin === -1) bin = reference.shares.length - 1;
    } else {
      bin = reference.categories.indexOf(String(value));
      if (bin === -1) bin = reference.shares.length - 1;
    }
    counts[bin] = (counts[bin] ?? 0) + 1;
  }
  return counts.map((count) => (values.length === 0 ? 0 : count / values.length));
}

export function psi(reference: readonly number[], live: readonly number[]): number {
  let total = 0;
  reference.forEach((share, i) => {
    const r = Math.max(share, EPSILON);
    const l = Math.max(live[i] ?? 0, EPSILON);
    total += (l - r) * Math.log(l / r);
  });
  return total;
}

export const statusOf = (value: number): DriftStatus =>
  value >= PSI_DRIFT ? "drift" : value >= PSI_MODERATE ? "moderate" : "stable";
