"""Metrics from confusion counts at thresholds: Precision, Recall, AUC, TruePositives and kin.

Each keeps ``true_positives`` / ``false_positives`` / ``true_negatives`` / ``false_negatives``
(as needed) per threshold, as ON_READ / SUM variables: under a strategy every replica counts
its own examples and reading the result sums the counts. The counting is Keras 2's:

* predictions and labels are cast to the metric's dtype and their ranks matched; with
  ``top_k`` every prediction outside an example's top k becomes -inf; with ``class_id``
  only that class's column is kept; then everything is flattened;
* a label is positive when it is non-zero; a prediction is positive at threshold ``t`` when
  ``prediction > t`` (strictly); ``sample_weight`` broadcasts to the predictions;
* thresholds evenly spaced over [0, 1] (AUC's default) are counted by buckets, as Keras
  does: predictions are clipped to [0, 1], bucket ``max(ceil(p * (n - 1)) - 1, 0)``, and
  the counts are the reverse cumulative sums of the buckets.

``AUC`` integrates ROC or PR curves over its ``num_thresholds`` thresholds (default 200:
``[-eps, 1/199, ..., 198/199, 1 + eps]``) by interpolation (PR: Davis & Goadrich's
interpolation), minoring or majoring, as Keras 2.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor
from simdist.keras import backend
from simdist.keras.metric_base import Metric

__all__ = [
    "TruePositives",
    "FalsePositives",
    "TrueNegatives",
    "FalseNegatives",
    "Precision",
    "Recall",
    "AUC",
    "confusion_counts",
]

_COUNTS = ("true_positives", "false_positives", "true_negatives", "false_negatives")


def _numpy(x) -> np.ndarray:
    return np.asarray(convert_to_tensor(x)._value)


def _parse_thresholds(thresholds, default) -> list[float]:
    if thresholds is None:
        return [default]
    values = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    if any(t is None or t < 0 or t > 1 for t in values):
        raise ValueError(
            f"Threshold values must be in [0, 1]. Received: {values}; pass thresholds between "
            "0 and 1."
        )
    return [float(t) for t in values]


def _evenly_spaced(thresholds) -> bool:
    n = len(thresholds)
    if n < 3:
        return False
    even = np.arange(n, dtype=np.float32) / (n - 1)
    return bool(np.allclose(thresholds, even, atol=backend.epsilon()))


def _match_ranks(y_pred: np.ndarray, y_true: np.ndarray, weight):
    """Keras's ``squeeze_or_expand_dimensions`` on arrays: a trailing size-1 axis too many
    on either side is dropped; a weight one axis short gains one."""
    if y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        y_pred = y_pred[..., 0]
    elif y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    if weight is not None and weight.ndim:
        if weight.ndim == y_pred.ndim + 1 and weight.shape[-1] == 1:
            weight = weight[..., 0]
        elif weight.ndim == y_pred.ndim - 1:
            weight = weight[..., None]
    return y_pred, y_true, weight


def confusion_counts(
    y_true,
    y_pred,
    thresholds,
    *,
    evenly=False,
    top_k=None,
    class_id=None,
    sample_weight=None,
    label_weights=None,
    dtype=np.float32,
) -> dict[str, np.ndarray]:
    """``{count name: per-threshold counts}`` of one batch (see the module docstring).

    Raises:
        ValueError: labels and predictions whose shapes do not match.
    """  # fmt: skip
    y_true = _numpy(y_true).astype(dtype)
    y_pred = _numpy(y_pred).astype(dtype)
    weight = None if sample_weight is None else _numpy(sample_weight).astype(dtype)
    y_pred, y_true, weight = _match_ranks(y_pred, y_true, weight)
    if y_pred.shape != y_true.shape:
        raise ValueError(
            f"Shapes {y_pred.shape} and {y_true.shape} are incompatible: predictions and labels "
            "must have the same shape."
        )
    if weight is not None:
        weight = np.broadcast_to(weight, y_pred.shape)
    if top_k is not None:
        order = np.argsort(-y_pred, axis=-1, kind="stable")[..., :top_k]
        mask = np.zeros(y_pred.shape, bool)
        np.put_along_axis(mask, order, True, axis=-1)
        y_pred = np.where(mask, y_pred, dtype(-np.inf))
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
        weight = None if weight is None else weight[..., class_id]
    if label_weights is not None:
        per_label = np.broadcast_to(np.asarray(label_weights, dtype), y_pred.shape)
        weight = per_label if weight is None else weight * per_label
    labels = (y_true != 0).reshape(-1)
    preds = y_pred.reshape(-1)
    w = np.ones(preds.shape, dtype) if weight is None else weight.reshape(-1).astype(dtype)
    thresholds = np.asarray(thresholds, dtype)
    n = len(thresholds)
    if evenly:
        with_epsilon = thresholds[0] < 0 or thresholds[-1] > 1
        clipped = np.clip(preds, dtype(0), dtype(1))
        buckets = np.ceil(clipped * dtype(n - 1)) - dtype(1)
        if with_epsilon:
            buckets = np.maximum(buckets, 0)
        buckets = buckets.astype(np.int64)
        true_w = labels.astype(dtype) * w
        false_w = (dtype(1) - labels.astype(dtype)) * w
        tp = np.cumsum(np.bincount(buckets, true_w, n)[::-1])[::-1].astype(dtype)
        fp = np.cumsum(np.bincount(buckets, false_w, n)[::-1])[::-1].astype(dtype)
        return {
            "true_positives": tp,
            "false_positives": fp,
            "false_negatives": (np.sum(true_w, dtype=dtype) - tp).astype(dtype),
            "true_negatives": (np.sum(false_w, dtype=dtype) - fp).astype(dtype),
        }
    positive = preds[None, :] > thresholds[:, None]

    def count(mask):
        return np.sum(mask * w[None, :], axis=1, dtype=dtype)

    return {
        "true_positives": count(positive & labels),
        "false_positives": count(positive & ~labels),
        "true_negatives": count(~positive & ~labels),
        "false_negatives": count(~positive & labels),
    }


def _divide_no_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, np.zeros_like(a), a / np.where(b == 0, 1, b))


class _ConfusionMetric(Metric):
    """Keeps the counts named in ``_KEEP`` per threshold and updates them per batch."""

    _KEEP: tuple[str, ...] = ()

    def __init__(
        self, thresholds: list[float], init_thresholds, top_k=None, class_id=None, name=None,
        dtype=None, count_shape=(),
    ) -> None:  # fmt: skip
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = init_thresholds
        self.thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        self._evenly = _evenly_spaced(self.thresholds)
        if count_shape is not None:
            self._build_counts(count_shape)

    def _build_counts(self, per_threshold_shape: tuple) -> None:
        """The count variables: one per threshold, each of ``per_threshold_shape``."""
        shape = (len(self.thresholds), *per_threshold_shape)
        for count in self._KEEP:
            setattr(self, count, self.add_weight(count, shape=shape))

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        counts = confusion_counts(
            y_true,
            y_pred,
            self.thresholds,
            evenly=self._evenly,
            top_k=self.top_k,
            class_id=self.class_id,
            sample_weight=sample_weight,
            dtype=self.dtype_numpy,
        )
        for count in self._KEEP:
            getattr(self, count).assign_add(make_tensor(counts[count]))

    @property
    def dtype_numpy(self):
        return np.dtype(str(self.dtype)).type

    def _counts(self, name: str) -> np.ndarray:
        return _numpy(getattr(self, name))

    def _scalar_or_vector(self, values: np.ndarray) -> Tensor:
        values = values.astype(self.dtype_numpy)
        return convert_to_tensor(values[0] if len(self.thresholds) == 1 else values)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": str(self.dtype), "thresholds": self.init_thresholds}


def _count_metric(count_name: str, doc: str) -> type:
    class Count(_ConfusionMetric):
        _KEEP = (count_name,)

        def __init__(self, thresholds=None, name=None, dtype=None) -> None:
            parsed = _parse_thresholds(thresholds, 0.5)
            super().__init__(parsed, thresholds, name=name, dtype=dtype)

        def result(self) -> Tensor:
            return self._scalar_or_vector(self._counts(count_name))

    Count.__doc__ = doc
    return Count


TruePositives = _count_metric("true_positives", "The (weighted) number of true positives.")
FalsePositives = _count_metric("false_positives", "The (weighted) number of false positives.")
TrueNegatives = _count_metric("true_negatives", "The (weighted) number of true negatives.")
FalseNegatives = _count_metric("false_negatives", "The (weighted) number of false negatives.")
for _cls, _name in (
    (TruePositives, "TruePositives"),
    (FalsePositives, "FalsePositives"),
    (TrueNegatives, "TrueNegatives"),
    (FalseNegatives, "FalseNegatives"),
):
    _cls.__name__ = _cls.__qualname__ = _name


class Precision(_ConfusionMetric):
    """``tp / (tp + fp)`` at each threshold (default 0.5; with ``top_k``: -inf); 0 when no
    prediction is positive."""

    _KEEP = ("true_positives", "false_positives")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        default = 0.5 if top_k is None else float("-inf")
        parsed = _parse_thresholds(thresholds, default)
        super().__init__(parsed, thresholds, top_k, class_id, name=name, dtype=dtype)

    def result(self) -> Tensor:
        tp, fp = self._counts("true_positives"), self._counts("false_positives")
        return self._scalar_or_vector(_divide_no_nan(tp, tp + fp))

    def get_config(self) -> dict:
        return {**super().get_config(), "top_k": self.top_k, "class_id": self.class_id}


class Recall(Precision):
    """``tp / (tp + fn)`` at each threshold; 0 when no label is positive."""

    _KEEP = ("true_positives", "false_negatives")

    def result(self) -> Tensor:
        tp, fn = self._counts("true_positives"), self._counts("false_negatives")
        return self._scalar_or_vector(_divide_no_nan(tp, tp + fn))


_CURVES = ("ROC", "PR")
_SUMMATIONS = ("interpolation", "minoring", "majoring")


class AUC(_ConfusionMetric):
    """Area under the ROC or precision-recall curve, from counts at ``num_thresholds``
    thresholds (see the module docstring).

    ``multi_label=True``: predictions ``[batch, labels]``; each label (column) has its own
    counts and curve, and the result is the mean of the labels' areas, or their
    ``label_weights``-weighted mean. Its counts are made for ``num_labels`` labels, or at the
    first update from the predictions' width. ``multi_label=False`` with ``label_weights``:
    one curve over every label, each label's examples weighted by its weight.

    Raises:
        ValueError: ``num_thresholds <= 1``, an unknown ``curve`` or ``summation_method``,
            thresholds outside [0, 1], negative ``label_weights``; at update, a number of
            labels that differs from ``num_labels`` or ``label_weights``, or ``multi_label``
            predictions that are not ``[batch, labels]``.
    """

    _KEEP = _COUNTS

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ) -> None:
        if str(curve).upper() not in _CURVES:
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are {_CURVES}.')
        if str(summation_method).lower() not in _SUMMATIONS:
            raise ValueError(
                f'Invalid AUC summation method value: "{summation_method}". Expected values '
                f"are {_SUMMATIONS}."
            )
        if label_weights is not None:
            weights = np.asarray(label_weights, dtype=np.float32)
            if weights.ndim != 1 or np.any(weights < 0):
                raise ValueError(
                    "All values of `label_weights` must be non-negative (one weight per "
                    f"label). Received: label_weights={label_weights}"
                )
            label_weights = weights
        multi_label = bool(multi_label)
        if multi_label and num_labels is not None:
            num_labels = int(num_labels)
            count_shape = (num_labels,)
        else:
            count_shape = None if multi_label else ()
        if thresholds is not None:
            inner = sorted(_parse_thresholds(thresholds, 0.5))
            num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError(
                    "Argument `num_thresholds` must be an integer > 1. Received: "
                    f"num_thresholds={num_thresholds}"
                )
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        eps = backend.epsilon()
        edges = [0.0 - eps, *inner, 1.0 + eps]
        super().__init__(
            edges, None if thresholds is None else inner, name=name, dtype=dtype,
            count_shape=count_shape,
        )  # fmt: skip
        self._evenly = thresholds is None or _evenly_spaced(np.array([0.0, *inner, 1.0]))
        self.num_thresholds = num_thresholds
        self.curve = str(curve).upper()
        self.summation_method = str(summation_method).lower()
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = label_weights
        self.from_logits = from_logits

    def _check_labels(self, y_pred: np.ndarray) -> None:
        if self.multi_label and y_pred.ndim != 2:
            raise ValueError(
                "`y_pred` must have rank 2 when `multi_label=True`: [batch, labels]. Found "
                f"rank {y_pred.ndim} with shape {list(y_pred.shape)}."
            )
        labels = y_pred.shape[-1] if y_pred.ndim else 1
        expected = [("num_labels", self.num_labels)] if self.multi_label else []
        if self.label_weights is not None:
            expected.append(("label_weights", len(self.label_weights)))
        for what, count in expected:
            if count is not None and labels != count:
                raise ValueError(
                    f"Number of labels is not consistent: the predictions have {labels} "
                    f"labels, {what} says {count}."
                )

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        p = _numpy(y_pred).astype(self.dtype_numpy)
        if self.from_logits:
            p = (1 / (1 + np.exp(-p))).astype(self.dtype_numpy)
        self._check_labels(p)
        if not self.multi_label:
            counts = confusion_counts(
                y_true,
                p,
                self.thresholds,
                evenly=self._evenly,
                sample_weight=sample_weight,
                label_weights=self.label_weights,
                dtype=self.dtype_numpy,
            )
        else:
            counts = self._counts_by_label(_numpy(y_true), p, sample_weight)
        for count in self._KEEP:
            getattr(self, count).assign_add(make_tensor(counts[count]))

    def _counts_by_label(self, y_true, y_pred, sample_weight) -> dict[str, np.ndarray]:
        """``[thresholds, labels]`` counts: each column counted on its own."""
        if not hasattr(self, "true_positives"):  # built at the first update, as Keras
            # (under a strategy every replica gets here before any has the counts)
            self._build_counts((int(y_pred.shape[1]),))
            self.num_labels = int(y_pred.shape[1])
        if y_true.shape != y_pred.shape:
            raise ValueError(
                f"Shapes {y_pred.shape} and {y_true.shape} are incompatible: predictions and "
                "labels must have the same shape."
            )
        weight = None
        if sample_weight is not None:
            weight = _numpy(sample_weight).astype(self.dtype_numpy)
            weight = weight[:, None] if weight.ndim == 1 else weight
            weight = np.broadcast_to(weight, y_pred.shape)
        columns = [
            confusion_counts(
                y_true[:, label],
                y_pred[:, label],
                self.thresholds,
                evenly=self._evenly,
                sample_weight=None if weight is None else weight[:, label],
                dtype=self.dtype_numpy,
            )
            for label in range(y_pred.shape[1])
        ]
        return {name: np.stack([c[name] for c in columns], axis=1) for name in _COUNTS}

    def _average_labels(self, by_label: np.ndarray) -> np.ndarray:
        """One area per label -> their mean, or their ``label_weights``-weighted mean."""
        if not self.multi_label:
            return by_label
        if self.label_weights is None:
            return np.mean(by_label)
        weights = self.label_weights.astype(by_label.dtype)
        return _divide_no_nan(np.sum(by_label * weights), np.sum(weights))

    def reset_state(self) -> None:
        if hasattr(self, "true_positives"):
            super().reset_state()

    def _interpolate_pr_auc(self, tp, fp, fn) -> np.ndarray:
        """Davis & Goadrich (2006): precision interpolated between thresholds."""
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, _divide_no_nan(p[:-1], np.maximum(p[1:], 0)), np.ones_like(p[1:]))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.log(ratio)
        increments = _divide_no_nan(
            slope * (dtp + intercept * log_ratio), np.maximum(tp[1:] + fn[1:], 0)
        )
        return np.sum(increments, axis=0)

    def result(self) -> Tensor:
        if not hasattr(self, "true_positives"):  # multi_label, never updated
            return convert_to_tensor(np.asarray(0.0, self.dtype_numpy))
        tp, fp, tn, fn = (
            self._counts(c) for c in _COUNTS[:2] + ("true_negatives", "false_negatives")
        )
        if self.curve == "PR" and self.summation_method == "interpolation":
            area = self._average_labels(self._interpolate_pr_auc(tp, fp, fn))
            return convert_to_tensor(np.asarray(area).astype(self.dtype_numpy))
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        area = self._average_labels(np.sum((x[:-1] - x[1:]) * heights, axis=0))
        return convert_to_tensor(np.asarray(area).astype(self.dtype_numpy))

    def get_config(self) -> dict:
        return {
            "name": self.name,
            "dtype": str(self.dtype),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
            "thresholds": self.init_thresholds,
            "from_logits": self.from_logits,
        }
