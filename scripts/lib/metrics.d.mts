// Types of metrics.mjs for the TypeScript tests that import it.
export function precisionRecallCurve(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
): { threshold: number; precision: number; recall: number }[];
export function averagePrecision(labels: ArrayLike<number>, scores: ArrayLike<number>): number;
export function precisionRecallAt(
  labels: ArrayLike<number>,
  scores: ArrayLike<number>,
  threshold: number,
): { precision: number; recall: number; flagged: number };
