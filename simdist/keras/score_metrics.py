"""``FBetaScore``/``F1Score``, ``R2Score`` and ``MeanIoU``: metrics of accumulated counts.

Their state is ON_READ / SUM variables (:class:`~simdist.keras.metric_base.Metric`): under a
strategy each replica accumulates its own examples and the result reads the sums, as Keras 2.

* ``FBetaScore`` (2-D ``[batch, classes]`` inputs; state made at the first update): a
  prediction is positive above ``threshold``, or, with ``threshold=None``, where it is its
  row's maximum (and not ~0); per class (``average`` None/``macro``/``weighted``) or over
  all (``micro``) it sums true positives, false positives, false negatives and the labels'
  weight; ``(1 + beta^2) p r / (beta^2 p + r)`` of precision and recall (0 where undefined),
  averaged (``macro``), label-weighted (``weighted``) or per class (None).
* ``R2Score`` (2-D inputs): per output ``1 - SSE / (sum y^2 - sum(y) mean(y))`` (weighted;
  infinite where the labels do not vary: 0), averaged uniformly or by the labels' variance
  (or per output), adjusted for ``num_regressors`` when there are enough samples.
* ``MeanIoU``: a ``num_classes x num_classes`` confusion matrix (rows labels, columns
  predictions; optionally from one-hot/probabilities by arg-max, without ``ignore_class``
  examples); the mean over classes that occur of ``TP / (row + column - TP)``.
"""

from __future__ import annotations

import warnings

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor
from simdist.keras.metric_base import Metric

__all__ = ["FBetaScore", "F1Score", "R2Score", "MeanIoU"]


def _numpy(x, dtype) -> np.ndarray:
    return np.asarray(convert_to_tensor(x)._value).astype(dtype)


def _np_dtype(metric):
    return np.dtype(str(metric.dtype)).type


def _divide_no_nan(a, b):
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, np.zeros_like(a), a / np.where(b == 0, 1, b))


def _read(variable) -> np.ndarray:
    return np.asarray(convert_to_tensor(variable)._value)


def _check_2d(name: str, y_true_shape, y_pred_shape) -> None:
    if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
        raise ValueError(
            f"{name} expects 2D inputs with shape (batch_size, output_dim). Received input "
            f"shapes: y_pred.shape={tuple(y_pred_shape)} and y_true.shape={tuple(y_true_shape)}."
        )


class FBetaScore(Metric):
    """The F-beta score (see the module docstring).

    Raises:
        ValueError: an unknown ``average``, a ``beta`` that is not a positive float, a
            ``threshold`` that is not a float in (0, 1]; at update, inputs that are not 2-D.
    """

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(
                "Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                f"'weighted'}}. Received: average={average}"
            )
        if not isinstance(beta, float):
            raise ValueError(
                "Invalid `beta` argument value. It should be a Python float. Received: "
                f"beta={beta} of type '{type(beta)}'"
            )
        if beta <= 0.0:
            raise ValueError(
                f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}"
            )
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(
                    "Invalid `threshold` argument value. It should be a Python float. "
                    f"Received: threshold={threshold} of type '{type(threshold)}'"
                )
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError(
                    "Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                    f"Received: threshold={threshold}"
                )
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._counts = None

    def _build(self, classes: int) -> None:
        shape = () if self.average == "micro" else (classes,)
        names = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")
        self._counts = {n: self.add_weight(n, shape=shape) for n in names}

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        dtype = _np_dtype(self)
        truth, pred = _numpy(y_true, dtype), _numpy(y_pred, dtype)
        _check_2d("FBetaScore", truth.shape, pred.shape)
        if self._counts is None:
            self._build(int(pred.shape[-1]))
        if self.threshold is None:
            top = pred.max(axis=-1, keepdims=True)
            positive = (pred >= top) & (np.abs(pred) > 1e-9)
        else:
            positive = pred > dtype(self.threshold)
        pred = positive.astype(dtype)
        weight = None if sample_weight is None else _numpy(sample_weight, dtype)[:, None]

        def weighted_sum(values):
            if weight is not None:
                values = values * weight
            return np.sum(values, axis=self.axis, dtype=dtype)

        updates = {
            "true_positives": pred * truth,
            "false_positives": pred * (1 - truth),
            "false_negatives": (1 - pred) * truth,
            "intermediate_weights": truth,
        }
        for name, values in updates.items():
            self._counts[name].assign_add(make_tensor(np.asarray(weighted_sum(values), dtype)))

    def result(self) -> Tensor:
        if self._counts is None:
            return convert_to_tensor(np.asarray(0.0, _np_dtype(self)))
        names = ("true_positives", "false_positives", "false_negatives", "intermediate_weights")
        tp, fp, fn, weights = (_read(self._counts[n]) for n in names)
        precision = _divide_no_nan(tp, tp + fp)
        recall = _divide_no_nan(tp, tp + fn)
        beta2 = np.asarray(self.beta, tp.dtype) ** 2
        score = _divide_no_nan(precision * recall, beta2 * precision + recall) * (1 + beta2)
        if self.average == "weighted":
            score = np.sum(score * _divide_no_nan(weights, np.sum(weights)))
        elif self.average is not None:
            score = np.mean(score)
        return convert_to_tensor(np.asarray(score, tp.dtype))

    def reset_state(self) -> None:
        for v in self.variables:
            v.assign(np.zeros(tuple(v.shape), v.dtype.as_numpy_dtype))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "average": self.average,
            "beta": self.beta,
            "threshold": self.threshold,
        }


class F1Score(FBetaScore):
    """``FBetaScore`` with ``beta=1``."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["beta"]
        return config


class R2Score(Metric):
    """The coefficient of determination (see the module docstring).

    Raises:
        ValueError: an unknown ``class_aggregation`` or a negative ``num_regressors``; at
            update, inputs that are not 2-D.
    """

    _AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")

    def __init__(
        self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None
    ):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in self._AGGREGATIONS:
            raise ValueError(
                "Invalid value for argument `class_aggregation`. Expected one of "
                f"{self._AGGREGATIONS}. Received: class_aggregation={class_aggregation}"
            )
        if num_regressors < 0:
            raise ValueError(
                "Invalid value for argument `num_regressors`. Expected a value >= 0. "
                f"Received: num_regressors={num_regressors}"
            )
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_weight("num_samples", dtype="int32")
        self._sums = None

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        dtype = _np_dtype(self)
        truth, pred = _numpy(y_true, dtype), _numpy(y_pred, dtype)
        _check_2d("R2Score", truth.shape, pred.shape)
        if self._sums is None:
            shape = (int(pred.shape[-1]),)
            self._sums = {n: self.add_weight(n, shape=shape) for n in (
                "squared_sum", "sum", "residual", "count")}  # fmt: skip
        weight = np.asarray(1, dtype) if sample_weight is None else _numpy(sample_weight, dtype)
        if weight.ndim == 1:
            weight = weight[:, None]
        weight = np.broadcast_to(weight, truth.shape)
        weighted = truth * weight
        updates = {
            "sum": weighted.sum(axis=0),
            "squared_sum": (truth * weighted).sum(axis=0),
            "residual": ((truth - pred) ** 2 * weight).sum(axis=0),
            "count": weight.sum(axis=0),
        }
        for name, values in updates.items():
            self._sums[name].assign_add(make_tensor(np.asarray(values, dtype)))
        self.num_samples.assign_add(make_tensor(np.asarray(truth.size, np.int32)))

    def result(self) -> Tensor:
        dtype = _np_dtype(self)
        if self._sums is None:
            return convert_to_tensor(np.asarray(np.nan, dtype))
        total_sum, squared, residual, count = (_read(self._sums[n]) for n in (
            "sum", "squared_sum", "residual", "count"))  # fmt: skip
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = total_sum / count
            total = squared - total_sum * mean
            raw = 1 - residual / total
        raw = np.where(np.isinf(raw), dtype(0), raw)
        if self.class_aggregation == "uniform_average":
            score = np.mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = np.sum(total * raw) / np.sum(total)
        else:
            score = raw
        if self.num_regressors:
            n = int(_read(self.num_samples))
            if self.num_regressors > n - 1:
                warnings.warn(
                    "More independent predictors than datapoints in adjusted R2 score. Falling "
                    "back to standard R2 score.",
                    stacklevel=2,
                )
            elif self.num_regressors == n - 1:
                warnings.warn(
                    "Division by zero in Adjusted R2 score. Falling back to standard R2 score.",
                    stacklevel=2,
                )
            else:
                p = np.float32(self.num_regressors)
                score = 1 - (1 - score) * (np.float32(n) - 1) / (np.float32(n) - p - 1)
        return convert_to_tensor(np.asarray(score, dtype))

    def reset_state(self) -> None:
        for v in self.variables:
            v.assign(np.zeros(tuple(v.shape), v.dtype.as_numpy_dtype))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }


class MeanIoU(Metric):
    """The mean intersection-over-union of ``num_classes`` classes (module docstring).

    Raises:
        InvalidArgumentError: at update, a label or prediction outside ``[0, num_classes)``.
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):  # fmt: skip
        super().__init__(name=name, dtype=dtype)  # None: a unique mean_io_u_<n>, as Keras
        self.num_classes = int(num_classes)
        self.ignore_class = ignore_class
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.axis = axis
        self.target_class_ids = list(range(self.num_classes))
        shape = (self.num_classes, self.num_classes)
        self.total_cm = self.add_weight("total_confusion_matrix", shape=shape)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        truth = np.asarray(convert_to_tensor(y_true)._value)
        pred = np.asarray(convert_to_tensor(y_pred)._value)
        if not self.sparse_y_true:
            truth = np.argmax(truth, axis=self.axis)
        if not self.sparse_y_pred:
            pred = np.argmax(pred, axis=self.axis)
        dtype = _np_dtype(self)
        truth = truth.astype(dtype).reshape(-1).astype(np.int64)
        pred = pred.astype(dtype).reshape(-1).astype(np.int64)
        weight = None
        if sample_weight is not None:
            weight = _numpy(sample_weight, dtype).reshape(-1)
            weight = np.broadcast_to(weight, truth.shape)
        if self.ignore_class is not None:
            keep = truth != int(self.ignore_class)
            truth, pred = truth[keep], pred[keep]
            weight = None if weight is None else weight[keep]
        for what, values in (("labels", truth), ("predictions", pred)):
            bad = (values < 0) | (values >= self.num_classes)
            if np.any(bad):
                raise errors.InvalidArgumentError(
                    f"`{what}` must be in the range [0, {self.num_classes}); found "
                    f"{int(values[bad][0])}."
                )
        cm = np.zeros((self.num_classes, self.num_classes), dtype)
        np.add.at(cm, (truth, pred), 1 if weight is None else weight)
        self.total_cm.assign_add(make_tensor(cm))

    def result(self) -> Tensor:
        cm = _read(self.total_cm)
        column, row, tp = cm.sum(axis=0), cm.sum(axis=1), np.diagonal(cm)
        denominator = column + row - tp
        valid = np.sum(denominator != 0).astype(cm.dtype)
        iou = _divide_no_nan(tp, denominator)
        return convert_to_tensor(np.asarray(_divide_no_nan(np.sum(iou), valid), cm.dtype))

    def get_config(self) -> dict:
        return {
            "num_classes": self.num_classes,
            "name": self.name,
            "dtype": self.dtype,
            "ignore_class": self.ignore_class,
            "sparse_y_true": self.sparse_y_true,
            "sparse_y_pred": self.sparse_y_pred,
            "axis": self.axis,
        }
