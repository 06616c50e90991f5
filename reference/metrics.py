"""Metric rules: confusion counts at thresholds, precision/recall/AUC, and their aggregation.

Sources read for these rules: tf_keras's ``metrics/confusion_metrics.py`` and
``utils/metrics_utils.py`` (``update_confusion_matrix_variables``), and ``tf.distribute``'s
ON_READ / SUM variables (a metric's state under a strategy).

The rules stated:

* an example's label is positive when it is non-zero; its prediction is positive at
  threshold ``t`` when ``prediction > t``; each (label, prediction) pair adds its weight
  (default 1) to exactly one of tp / fp / tn / fn at each threshold;
* precision = tp / (tp + fp), recall = tp / (tp + fn), 0 where the denominator is 0;
* ROC AUC by the trapezoid rule over the thresholds' (fpr, tpr) points;
* **aggregation**: a metric whose state is counts (or a total and a count) summed over
  replicas gives, read in the cross-replica context, the value of the same metric fed the
  concatenation of the replicas' examples. (The order of the additions differs: float64
  here, exact for integer counts.)

All arithmetic is float64, with plain loops.
"""

from __future__ import annotations

from collections.abc import Sequence


def confusion_counts(
    labels: Sequence[float],
    predictions: Sequence[float],
    thresholds: Sequence[float],
    weights: Sequence[float] | None = None,
) -> dict[str, list[float]]:
    """``{'tp', 'fp', 'tn', 'fn'}``: one weighted count per threshold.

    Args:
      labels, predictions: flat sequences of the same length.
      thresholds: the thresholds, in order.
      weights: one weight per example (default 1).

    Raises:
      ValueError: sequences of different lengths.
    """
    labels = [float(x) for x in labels]
    predictions = [float(x) for x in predictions]
    weights = [1.0] * len(labels) if weights is None else [float(w) for w in weights]
    if not len(labels) == len(predictions) == len(weights):
        raise ValueError("labels, predictions and weights must have the same length")
    counts: dict[str, list[float]] = {"tp": [], "fp": [], "tn": [], "fn": []}
    for t in thresholds:
        tp = fp = tn = fn = 0.0
        for label, prediction, weight in zip(labels, predictions, weights, strict=True):
            positive_label = label != 0.0
            positive_prediction = prediction > t
            if positive_label and positive_prediction:
                tp += weight
            elif positive_prediction:
                fp += weight
            elif positive_label:
                fn += weight
            else:
                tn += weight
        for key, value in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
            counts[key].append(value)
    return counts


def _ratio(a: float, b: float) -> float:
    return 0.0 if b == 0 else a / b


def precision(counts: dict[str, list[float]]) -> list[float]:
    """tp / (tp + fp) at each threshold (0 where nothing was predicted positive)."""
    return [_ratio(tp, tp + fp) for tp, fp in zip(counts["tp"], counts["fp"], strict=True)]


def recall(counts: dict[str, list[float]]) -> list[float]:
    """tp / (tp + fn) at each threshold (0 where no label is positive)."""
    return [_ratio(tp, tp + fn) for tp, fn in zip(counts["tp"], counts["fn"], strict=True)]


def roc_auc(counts: dict[str, list[float]]) -> float:
    """The trapezoid-rule area under the (fpr, tpr) points, thresholds in increasing order."""
    tpr = recall(counts)
    fpr = [_ratio(fp, fp + tn) for fp, tn in zip(counts["fp"], counts["tn"], strict=True)]
    area = 0.0
    for i in range(len(tpr) - 1):
        area += (fpr[i] - fpr[i + 1]) * (tpr[i] + tpr[i + 1]) / 2.0
    return area


def aggregate_counts(per_replica: Sequence[dict[str, list[float]]]) -> dict[str, list[float]]:
    """The counts a cross-replica read of ON_READ / SUM state gives: the replicas' sum."""
    keys = ("tp", "fp", "tn", "fn")
    total = {k: [0.0] * len(per_replica[0][k]) for k in keys}
    for counts in per_replica:
        for k in keys:
            total[k] = [a + b for a, b in zip(total[k], counts[k], strict=True)]
    return total
