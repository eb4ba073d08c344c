// Ranking metrics shared by the fraud scripts and tests.

/**
 * Precision and recall of `score >= t` at every distinct score t, highest first (tied scores
 * form one threshold).
 * @param {ArrayLike<number>} labels 1 for a positive, 0 otherwise
 * @param {ArrayLike<number>} scores higher = more likely positive
 * @returns {{ threshold: number, precision: number, recall: number }[]}
 */
export function precisionRecallCurve(labels, scores) {
  const order = Array.from({ length: scores.length }, (_, i) => i).sort(
    (a, b) => scores[b] - scores[a] || a - b,
  );
  let positives = 0;
  for (let i = 0; i < labels.length; i++) positives += labels[i];
  const points = [];
  let tp = 0;
  let fp = 0;
  for (let k = 0; k < order.length; k++) {
    if (labels[order[k]]) tp++;
    else fp++;
    if (k === order.length - 1 || scores[order[k + 1]] !== scores[order[k]]) {
      points.push({
        threshold: scores[order[k]],
        precision: tp / (tp + fp),
        recall: tp / positives,
      });
    }
  }
  return points;
}

/**
 * sklearn's average_precision_score: the sum over distinct thresholds of (R_n − R_{n−1}) P_n.
 * @param {ArrayLike<number>} labels
 * @param {ArrayLike<number>} scores
 * @returns {number}
 */
export function averagePrecision(labels, scores) {
  let ap = 0;
  let previousRecall = 0;
  for (const { precision, recall } of precisionRecallCurve(labels, scores)) {
    ap += (recall - previousRecall) * precision;
    previousRecall = recall;
  }
  return ap;
}

/**
 * Precision and recall of `score >= threshold`, and how many scores it flags.
 * @param {ArrayLike<number>} labels
 * @param {ArrayLike<number>} scores
 * @param {number} threshold
 * @returns {{ precision: number, recall: number, flagged: number }}
 */
export function precisionRecallAt(labels, scores, threshold) {
  let tp = 0;
  let fp = 0;
  let positives = 0;
  for (let i = 0; i < labels.length; i++) {
    positives += labels[i];
    if (scores[i] >= threshold) {
      if (labels[i]) tp++;
      else fp++;
    }
  }
  return { precision: tp + fp ? tp / (tp + fp) : 1, recall: tp / positives, flagged: tp + fp };
}
