// Drift against the shipped reference distribution: a sample drawn in the reference's own
// proportions is stable; injecting a shift (amounts ×20 and every payment online, or scores
// pushed up) crosses the 0.25 PSI threshold on exactly the shifted features.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { driftReport, MIN_SAMPLE } from "../../../../../src/tasks/fraud/drift/drift";
import { binShares, psi, type Reference } from "../../../../../src/tasks/fraud/drift/psi";
import type { RuleInputs } from "../../../../../src/tasks/fraud/rules/rule-inputs";

const { features } = JSON.parse(readFileSync("models/fraud-gru/drift-reference.json", "utf8")) as {
  features: Record<string, Reference>;
};

/** n values in the reference's proportions: each numeric bin's values sit inside the bin. */
function draw(reference: Reference, n: number): (number | string)[] {
  const out: (number | string)[] = [];
  reference.shares.forEach((share, b) => {
    const count = Math.round(share * n);
    for (let i = 0; i < count; i++) {
      if (reference.kind === "categorical") out.push(reference.categories[b] ?? "");
      else {
        const high = reference.edges[b] ?? (reference.edges.at(-1) ?? 0) + 1;
        const low = b === 0 ? high - 1 : (reference.edges[b - 1] ?? 0);
        out.push(low + ((high - low) * (i + 1)) / (count + 1));
      }
    }
  });
  return out;
}

function rows(n: number, shift: { amount?: number; online?: boolean; score?: number } = {}) {
  const columns = Object.fromEntries(
    Object.entries(features).map(([name, reference]) => [name, draw(reference, n)]),
  );
  const size = Math.min(...Object.values(columns).map((values) => values.length));
  return Array.from({ length: size }, (_, i) => {
    const score = Number(columns.score?.[i]) + (shift.score ?? 0);
    const inputs = {
      transaction: {
        amount: Math.exp(Number(columns.log_amount?.[i])) * (shift.amount ?? 1),
        hour: Number(columns.hour?.[i]),
        method: shift.online ? "online" : String(columns.method?.[i]),
      },
      card: { history_count: Number(columns.history_count?.[i]) },
      score,
    } as unknown as RuleInputs;
    return { score, inputs };
  });
}

describe("fraud drift", () => {
  it("PSI is 0 for the reference itself and grows with the shift", () => {
    const amount = features.log_amount!;
    expect(psi(amount.shares, amount.shares)).toBe(0);
    const shifted = binShares(
      amount,
      draw(amount, 1000).map((x) => Number(x) + 1),
    );
    expect(psi(amount.shares, shifted)).toBeGreaterThan(0.25);
  });

  it("a sample in the reference's proportions raises no signal", () => {
    const report = driftReport(features, rows(2000));
    expect(report.drifted).toEqual([]);
    for (const feature of Object.values(report.features)) expect(feature.psi).toBeLessThan(0.1);
  });

  it("an injected shift is signalled on the shifted features only", () => {
    const report = driftReport(features, rows(2000, { amount: 20, online: true }));
    expect(report.drifted.toSorted()).toEqual(["log_amount", "method"]);
    expect(report.features.hour?.status).toBe("stable");
    const scored = driftReport(features, rows(2000, { score: 0.5 }));
    expect(scored.drifted).toEqual(["score"]);
  });

  it("stays silent below the minimum sample", () => {
    const few = rows(2000, { amount: 20 }).slice(0, MIN_SAMPLE - 1);
    expect(driftReport(features, few).drifted).toEqual([]);
  });
});
