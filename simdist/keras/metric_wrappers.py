"""Metrics that average a per-example function: top-k accuracies, errors, cross-entropies.

Each class is a :class:`~simdist.keras.metric_base.MeanMetricWrapper` (a running weighted
mean over everything seen, ON_READ / SUM state under a strategy), except
``RootMeanSquaredError``, the square root of the running mean of squared errors.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import elementwise_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor, make_tensor
from simdist.keras import backend
from simdist.keras.losses import (
    binary_crossentropy,
    categorical_crossentropy,
    kl_divergence,
    mean_absolute_error,
    mean_squared_error,
    sparse_categorical_crossentropy,
)
from simdist.keras.losses_utils import squeeze_or_expand_dimensions
from simdist.keras.metric_base import Mean, MeanMetricWrapper
from simdist.keras.regression_losses import l2_normalize

__all__ = [
    "sparse_top_k_categorical_accuracy",
    "top_k_categorical_accuracy",
    "cosine_similarity",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "RootMeanSquaredError",
    "TopKCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "KLDivergence",
    "CosineSimilarity",
]


def sparse_top_k_categorical_accuracy(y_true, y_pred, k: int = 5) -> Tensor:
    """1.0 where the integer label is among the ``k`` highest predictions (TF's ``in_top_k``:
    a label tied with the k-th highest counts; a non-finite prediction never does)."""
    labels = np.asarray(convert_to_tensor(y_true)._value)
    preds = np.asarray(convert_to_tensor(y_pred)._value)
    shape = labels.shape
    preds = preds.reshape(-1, preds.shape[-1])
    targets = labels.reshape(-1).astype(np.int64)
    if targets.shape[0] != preds.shape[0]:
        raise ValueError(
            f"labels of shape {shape} do not match predictions of shape {preds.shape}: one "
            "integer label per row of predictions is needed."
        )
    rows = np.arange(preds.shape[0])
    valid = (targets >= 0) & (targets < preds.shape[1])
    target_scores = preds[rows, np.clip(targets, 0, preds.shape[1] - 1)]
    higher = np.sum(preds > target_scores[:, None], axis=1)
    matches = valid & np.isfinite(target_scores) & (higher < k)
    out = matches.astype(backend.floatx())
    return make_tensor(out.reshape(shape) if len(shape) > 1 else out)


def top_k_categorical_accuracy(y_true, y_pred, k: int = 5) -> Tensor:
    """1.0 where the one-hot label's class is among the ``k`` highest predictions."""
    return sparse_top_k_categorical_accuracy(reduction_ops.argmax(y_true, -1), y_pred, k)


def cosine_similarity(y_true, y_pred, axis: int = -1) -> Tensor:
    """The cosine of the angle between labels and predictions along ``axis`` (1: same way)."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    t, p = l2_normalize(y_true, axis), l2_normalize(y_pred, axis)
    return reduction_ops.reduce_sum(math_ops.multiply(t, p), axis=axis)


class _Wrapper(MeanMetricWrapper):
    """A :class:`MeanMetricWrapper` with Keras's config (name, dtype and the fn's kwargs)."""

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": str(self.dtype), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class MeanSquaredError(_Wrapper):
    """The running mean of ``mean_squared_error``."""

    def __init__(self, name="mean_squared_error", dtype=None) -> None:
        super().__init__(mean_squared_error, name=name, dtype=dtype)


class MeanAbsoluteError(_Wrapper):
    """The running mean of ``mean_absolute_error``."""

    def __init__(self, name="mean_absolute_error", dtype=None) -> None:
        super().__init__(mean_absolute_error, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the running (weighted) mean of squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        y_pred, y_true, _ = squeeze_or_expand_dimensions(y_pred, y_true)
        errors = elementwise_ops.square(math_ops.subtract(y_pred, y_true))
        super().update_state(errors, sample_weight=sample_weight)

    def result(self) -> Tensor:
        return elementwise_ops.sqrt(super().result())


class TopKCategoricalAccuracy(_Wrapper):
    """How often the one-hot label is among the ``k`` highest predictions."""

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None) -> None:
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class SparseTopKCategoricalAccuracy(_Wrapper):
    """How often the integer label is among the ``k`` highest predictions."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None) -> None:
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        matches = sparse_top_k_categorical_accuracy(y_true, y_pred, **self._fn_kwargs)
        Mean.update_state(self, matches, sample_weight=sample_weight)


class BinaryCrossentropy(_Wrapper):
    """The running mean of ``binary_crossentropy``."""

    def __init__(
        self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0
    ) -> None:
        super().__init__(
            binary_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )


class CategoricalCrossentropy(_Wrapper):
    """The running mean of ``categorical_crossentropy``."""

    def __init__(
        self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0,
        axis=-1,
    ) -> None:  # fmt: skip
        super().__init__(
            categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )


class SparseCategoricalCrossentropy(_Wrapper):
    """The running mean of ``sparse_categorical_crossentropy``."""

    def __init__(
        self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False, axis=-1
    ) -> None:
        super().__init__(
            sparse_categorical_crossentropy,
            name=name,
            dtype=dtype,
            from_logits=from_logits,
            axis=axis,
        )

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        values = sparse_categorical_crossentropy(y_true, y_pred, **self._fn_kwargs)
        Mean.update_state(self, values, sample_weight=sample_weight)


class KLDivergence(_Wrapper):
    """The running mean of ``kl_divergence``."""

    def __init__(self, name="kullback_leibler_divergence", dtype=None) -> None:
        super().__init__(kl_divergence, name=name, dtype=dtype)


class CosineSimilarity(_Wrapper):
    """The running mean of the cosine similarity (positive: 1 means the same direction)."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1) -> None:
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)
