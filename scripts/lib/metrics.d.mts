// Types of metrics.mjs for the TypeScript tests that import it.
export function averagePrecision(labels: ArrayLike<number>, scores: ArrayLike<number>): number;
