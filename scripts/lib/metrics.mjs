// Ranking metrics shared by the fraud scripts and tests.

/**
 * sklearn's average_precision_score: the sum over distinct thresholds of (R_n − R_{n−1}) P_n,
 * tied scores grouped into one threshold.
 * @param {ArrayLike<number>} labels 1 for a positive, 0 otherwise
 * @param {ArrayLike<number>} scores higher = more likely positive
 * @returns {number}
 */
export function averagePrecision(labels, scores) {
  const order = Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
  let positives = 0;
  for (let i = 0; i < labels.length; i++) positives += labels[i];
  let tp = 0;
  let fp = 0;
  let ap = 0;
  let previousRecall = 0;
  for (let k = 0; k < order.length; k++) {
    if (labels[order[k]]) tp++;
    else fp++;
    if (k === order.length - 1 || scores[order[k + 1]] !== scores[order[k]]) {
      const recall = tp / positives;
      ap += (recall - previousRecall) * (tp / (tp + fp));
      previousRecall = recall;
    }
  }
  return ap;
}
