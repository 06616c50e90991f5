"""Keras 2's regression, distribution and margin losses, as functions and as classes.

Each function returns one value per example, reducing the last axis as Keras 2 does; each
class wraps its function in a :class:`~simdist.keras.losses.LossFunctionWrapper` (ranks
matched, weighted, reduced). Formulas, with ``eps = tf.keras.backend.epsilon()``:

* ``huber``: ``0.5 e^2`` where ``|e| <= delta``, else ``delta |e| - 0.5 delta^2``; mean;
* ``log_cosh``: ``e + softplus(-2 e) - log 2`` (``log(cosh(e))`` without overflow); mean;
* ``kl_divergence``: ``sum(t log(t / p))`` with ``t, p`` clipped to ``[eps, 1]``;
* ``poisson``: ``mean(p - t log(p + eps))``;
* ``cosine_similarity``: ``-sum(l2_normalize(t) * l2_normalize(p))`` along ``axis``
  (``l2_normalize(x) = x / sqrt(max(sum(x^2), 1e-12))``);
* ``mean_absolute_percentage_error``: ``100 mean(|t - p| / max(|t|, eps))``;
* ``mean_squared_logarithmic_error``: ``mean((log(max(p, eps) + 1) - log(max(t, eps) + 1))^2)``;
* ``hinge`` / ``squared_hinge``: labels 0/1 become -1/1; ``mean(max(1 - t p, 0))`` (squared).
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core.ops import (
    array_ops,
    comparison_ops,
    elementwise_ops,
    math_ops,
    nn_ops,
    reduction_ops,
)
from simdist.core.tensor import Tensor
from simdist.keras import backend
from simdist.keras.loss_base import LossFunctionWrapper
from simdist.keras.losses_utils import ReductionV2, prepare_labels

__all__ = [
    "huber",
    "log_cosh",
    "kl_divergence",
    "poisson",
    "cosine_similarity",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "hinge",
    "squared_hinge",
    "Huber",
    "LogCosh",
    "KLDivergence",
    "Poisson",
    "CosineSimilarity",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "Hinge",
    "SquaredHinge",
]


def _mean(x: Tensor, axis: int = -1) -> Tensor:
    return reduction_ops.reduce_mean(x, axis=axis)


def huber(y_true, y_pred, delta: float = 1.0) -> Tensor:
    """Huber loss: quadratic for errors up to ``delta``, linear beyond; mean over the last axis."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    error = math_ops.subtract(y_pred, y_true)
    abs_error = elementwise_ops.abs(error)
    quadratic = math_ops.multiply(0.5, elementwise_ops.square(error))
    linear = math_ops.subtract(math_ops.multiply(delta, abs_error), 0.5 * delta * delta)
    small = comparison_ops.less_equal(abs_error, delta)
    return _mean(array_ops.where(small, quadratic, linear))


def log_cosh(y_true, y_pred) -> Tensor:
    """``mean(log(cosh(y_pred - y_true)))`` over the last axis, computed without overflow."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    x = math_ops.subtract(y_pred, y_true)
    value = math_ops.add(x, nn_ops.softplus(math_ops.multiply(-2.0, x)))
    return _mean(math_ops.subtract(value, math.log(2.0)))


def kl_divergence(y_true, y_pred) -> Tensor:
    """Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))`` over the last axis."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    eps = backend.epsilon()
    t = math_ops.clip_by_value(y_true, eps, 1.0)
    p = math_ops.clip_by_value(y_pred, eps, 1.0)
    terms = math_ops.multiply(t, elementwise_ops.log(math_ops.divide(t, p)))
    return reduction_ops.reduce_sum(terms, axis=-1)


def poisson(y_true, y_pred) -> Tensor:
    """``mean(y_pred - y_true * log(y_pred + eps))`` over the last axis."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    log_p = elementwise_ops.log(math_ops.add(y_pred, backend.epsilon()))
    return _mean(math_ops.subtract(y_pred, math_ops.multiply(y_true, log_p)))


def l2_normalize(x: Tensor, axis: int) -> Tensor:
    squared = reduction_ops.reduce_sum(elementwise_ops.square(x), axis=axis, keepdims=True)
    return math_ops.multiply(x, elementwise_ops.rsqrt(math_ops.maximum(squared, 1e-12)))


def cosine_similarity(y_true, y_pred, axis: int = -1) -> Tensor:
    """Negative cosine similarity along ``axis``: -1 for the same direction, 1 for opposite."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    t, p = l2_normalize(y_true, axis), l2_normalize(y_pred, axis)
    return elementwise_ops.negative(reduction_ops.reduce_sum(math_ops.multiply(t, p), axis=axis))


def mean_absolute_percentage_error(y_true, y_pred) -> Tensor:
    """``100 * mean(|y_true - y_pred| / max(|y_true|, eps))`` over the last axis."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    scale = math_ops.maximum(elementwise_ops.abs(y_true), backend.epsilon())
    ratio = math_ops.divide(elementwise_ops.abs(math_ops.subtract(y_true, y_pred)), scale)
    return math_ops.multiply(100.0, _mean(ratio))


def mean_squared_logarithmic_error(y_true, y_pred) -> Tensor:
    """``mean((log1p(max(y_pred, eps)) - log1p(max(y_true, eps)))^2)`` over the last axis."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    eps = backend.epsilon()
    log_p = elementwise_ops.log(math_ops.add(math_ops.maximum(y_pred, eps), 1.0))
    log_t = elementwise_ops.log(math_ops.add(math_ops.maximum(y_true, eps), 1.0))
    return _mean(elementwise_ops.square(math_ops.subtract(log_p, log_t)))


def _signed_labels(y_true: Tensor) -> Tensor:
    """Labels 0/1 as -1/1 (labels already in -1/1 are kept), as Keras 2's hinge losses."""
    values = np.asarray(y_true._value)
    if values.size and np.all((values == 0) | (values == 1)):
        return math_ops.subtract(math_ops.multiply(2.0, y_true), 1.0)
    return y_true


def hinge(y_true, y_pred) -> Tensor:
    """``mean(max(1 - y_true * y_pred, 0))`` with labels -1/1 (0/1 are converted)."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    margin = math_ops.subtract(1.0, math_ops.multiply(_signed_labels(y_true), y_pred))
    return _mean(math_ops.maximum(margin, 0.0))


def squared_hinge(y_true, y_pred) -> Tensor:
    """``mean(max(1 - y_true * y_pred, 0)^2)`` with labels -1/1 (0/1 are converted)."""
    y_true, y_pred = prepare_labels(y_true, y_pred)
    margin = math_ops.subtract(1.0, math_ops.multiply(_signed_labels(y_true), y_pred))
    return _mean(elementwise_ops.square(math_ops.maximum(margin, 0.0)))


# --- classes ------------------------------------------------------------------------------
class Huber(LossFunctionWrapper):
    """:func:`huber` with ``delta``, then reduced."""

    def __init__(self, delta=1.0, reduction=ReductionV2.AUTO, name="huber_loss") -> None:
        super().__init__(huber, reduction=reduction, name=name, delta=delta)


class LogCosh(LossFunctionWrapper):
    """:func:`log_cosh`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="log_cosh") -> None:
        super().__init__(log_cosh, reduction=reduction, name=name)


class KLDivergence(LossFunctionWrapper):
    """:func:`kl_divergence`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="kl_divergence") -> None:
        super().__init__(kl_divergence, reduction=reduction, name=name)


class Poisson(LossFunctionWrapper):
    """:func:`poisson`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="poisson") -> None:
        super().__init__(poisson, reduction=reduction, name=name)


class CosineSimilarity(LossFunctionWrapper):
    """:func:`cosine_similarity` along ``axis``, then reduced."""

    def __init__(self, axis=-1, reduction=ReductionV2.AUTO, name="cosine_similarity") -> None:
        super().__init__(cosine_similarity, reduction=reduction, name=name, axis=axis)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """:func:`mean_absolute_percentage_error`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="mean_absolute_percentage_error") -> None:
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """:func:`mean_squared_logarithmic_error`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="mean_squared_logarithmic_error") -> None:
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name)


class Hinge(LossFunctionWrapper):
    """:func:`hinge`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="hinge") -> None:
        super().__init__(hinge, reduction=reduction, name=name)


class SquaredHinge(LossFunctionWrapper):
    """:func:`squared_hinge`, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="squared_hinge") -> None:
        super().__init__(squared_hinge, reduction=reduction, name=name)
