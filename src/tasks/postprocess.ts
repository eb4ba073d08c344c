// Logits → probabilities → ranked labels; pure functions shared by classification tasks.

/** Numerically stable softmax over one row of logits. */
export function softmax(logits: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] ?? -Infinity);
  const exps = Array.from(logits, (value) => Math.exp(value - max));
  const sum = exps.reduce((total, value) => total + value, 0);
  return exps.map((value) => value / sum);
}

export interface LabelScore {
  label: string;
  score: number;
}

/** The k highest-scoring labels, best first (ties keep label order). */
export function topK(
  scores: readonly number[],
  labels: readonly string[],
  k: number,
): LabelScore[] {
  return scores
    .map((score, index) => ({ label: labels[index] ?? String(index), score }))
    .sort((a, b) => b.score - a.score)
    .slice(0, Math.max(1, k));
}

/** Splits a row-major [rows, columns] buffer into rows. */
export function rows(data: ArrayLike<number>, columns: number): number[][] {
  const result: number[][] = [];
  for (let start = 0; start < data.length; start += columns) {
    result.push(Array.from({ length: columns }, (_, i) => Number(data[start + i])));
  }
  return result;
}
