"""``tf.keras.metrics``: stateful metrics (``Mean``, ``Sum``, accuracies) and metric functions.

A metric is a Layer whose state lives in variables created with
``synchronization=ON_READ, aggregation=SUM, trainable=False``: under a strategy each replica
accumulates its own copy and reading the value sums them. ``update_state`` accumulates,
``result`` reads (float32 by default), ``reset_state`` zeroes; calling the metric updates
and returns the result. Metric variables are not weights of the model that holds the
metric.

>>> import simdist as tf
>>> m = tf.keras.metrics.Mean()
>>> m.update_state([1.25, 2.25])
>>> float(m.result())
1.75
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, comparison_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor
from simdist.core.variables import VariableAggregation, VariableSynchronization
from simdist.keras import backend, losses
from simdist.keras.engine.base_layer import Layer
from simdist.keras.losses_utils import squeeze_or_expand_dimensions

__all__ = [
    "Metric",
    "Reduce",
    "Sum",
    "Mean",
    "MeanMetricWrapper",
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "MeanSquaredError",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
]


class Metric(Layer):
    """Base class: subclasses create state with :meth:`add_weight` and implement
    ``update_state`` and ``result``."""

    _TRACKS = False

    def __init__(self, name=None, dtype=None, **kwargs) -> None:
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.built = True

    def __call__(self, *args, **kwargs) -> Tensor:
        """``update_state(*args, **kwargs)``, then ``result()``."""
        self.update_state(*args, **kwargs)
        return self.result()

    def add_weight(
        self,
        name,
        shape=(),
        aggregation=VariableAggregation.SUM,
        synchronization=VariableSynchronization.ON_READ,
        initializer=None,
        dtype=None,
    ):
        """A state variable: non-trainable, ON_READ, aggregated with ``aggregation``."""
        return super().add_weight(
            name=name,
            shape=shape,
            dtype=dtype or self.dtype,
            initializer=initializer or "zeros",
            trainable=False,
            synchronization=synchronization,
            aggregation=aggregation,
        )

    def _weight_path(self, name: str) -> str:
        return name  # Keras names metric state 'total:0', 'count:0'

    def update_state(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement update_state().")

    def result(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement result().")

    def reset_state(self) -> None:
        """Set every state variable back to zero."""
        for v in self.variables:
            v.assign(np.zeros(tuple(v.shape), v.dtype.as_numpy_dtype))

    reset_states = reset_state


def _read(variable) -> Tensor:
    return convert_to_tensor(variable)


class Reduce(Metric):
    """Accumulates a (weighted) sum, and for means a count."""

    _SUM, _WEIGHTED_MEAN = "sum", "weighted_mean"

    def __init__(self, reduction: str, name=None, dtype=None) -> None:
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction
        self.total = self.add_weight("total", initializer="zeros")
        if reduction != self._SUM:
            self.count = self.add_weight("count", initializer="zeros")

    def update_state(self, values, sample_weight=None) -> None:
        """Add ``values`` (times ``sample_weight``) to the total; for means, add the
        weights' sum (or the number of values) to the count.

        Raises:
            ValueError: ``sample_weight`` that cannot be matched to ``values``.
        """
        values = math_ops.cast(convert_to_tensor(values), self.dtype)
        weight = None
        if sample_weight is not None:
            weight = math_ops.cast(convert_to_tensor(sample_weight), self.dtype)
            values, _, weight = squeeze_or_expand_dimensions(values, None, weight)
            values, weight = self._match(values, weight)
            values = math_ops.multiply(values, weight)
        self.total.assign_add(reduction_ops.reduce_sum(values))
        if self.reduction == self._SUM:
            return
        if weight is None:
            count = convert_to_tensor(float(np.prod(tuple(values.shape))), dtype=self.dtype)
        else:
            count = reduction_ops.reduce_sum(array_ops.broadcast_to(weight, values.shape))
        self.count.assign_add(count)

    def _match(self, values: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
        try:
            np.broadcast_shapes(tuple(weight.shape), tuple(values.shape))
            return values, weight
        except ValueError:
            pass
        w_rank, v_rank = weight.shape.rank, values.shape.rank
        if w_rank >= v_rank or tuple(values.shape)[:w_rank] != tuple(weight.shape):
            raise ValueError(
                f"sample_weight of shape {tuple(weight.shape)} cannot be applied to values of "
                f"shape {tuple(values.shape)}; pass weights that broadcast to the values."
            ) from None
        axes = list(range(w_rank, v_rank))
        if self.reduction == self._SUM:
            return reduction_ops.reduce_sum(values, axis=axes), weight
        return reduction_ops.reduce_mean(values, axis=axes), weight

    def result(self) -> Tensor:
        total = _read(self.total)
        if self.reduction == self._SUM:
            return array_ops.identity(total)
        count = _read(self.count)
        if float(count) == 0.0:
            return math_ops.multiply(total, 0.0)
        return math_ops.divide(total, count)


class Sum(Reduce):
    """The running (weighted) sum of the values."""

    def __init__(self, name="sum", dtype=None) -> None:
        super().__init__(Reduce._SUM, name=name, dtype=dtype)


class Mean(Reduce):
    """The running weighted mean: ``sum(values * w) / sum(w)`` (w = 1 by default)."""

    def __init__(self, name="mean", dtype=None) -> None:
        super().__init__(Reduce._WEIGHTED_MEAN, name=name, dtype=dtype)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)`` over everything seen."""

    def __init__(self, fn: Callable, name=None, dtype=None, **kwargs) -> None:
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        y_pred, y_true, _ = squeeze_or_expand_dimensions(y_pred, y_true)
        matches = self._fn(y_true, y_pred, **self._fn_kwargs)
        super().update_state(matches, sample_weight=sample_weight)


# --- metric functions (one value per example) -------------------------------------------
def _as_float(x: Tensor) -> Tensor:
    return math_ops.cast(x, backend.floatx())


def accuracy(y_true, y_pred) -> Tensor:
    """1.0 where ``y_pred`` equals ``y_true``, else 0.0."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.dtype != y_pred.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return _as_float(comparison_ops.equal(y_true, y_pred))


def binary_accuracy(y_true, y_pred, threshold: float = 0.5) -> Tensor:
    """Mean over the last axis of ``(y_pred > threshold) == y_true``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    predicted = math_ops.cast(comparison_ops.greater(y_pred, threshold), y_pred.dtype)
    return reduction_ops.reduce_mean(_as_float(comparison_ops.equal(y_true, predicted)), -1)


def categorical_accuracy(y_true, y_pred) -> Tensor:
    """1.0 where the arg-max class of ``y_pred`` is the one-hot ``y_true``'s."""
    return _as_float(
        comparison_ops.equal(reduction_ops.argmax(y_true, -1), reduction_ops.argmax(y_pred, -1))
    )


def sparse_categorical_accuracy(y_true, y_pred) -> Tensor:
    """1.0 where the arg-max class of ``y_pred`` equals the integer label ``y_true``."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.shape.rank == y_pred.shape.rank and y_true.shape.rank > 1:
        y_true = array_ops.squeeze(y_true, [-1])
    predicted = reduction_ops.argmax(y_pred, -1)
    if predicted.dtype != y_true.dtype:
        predicted = math_ops.cast(predicted, y_true.dtype)
    return _as_float(comparison_ops.equal(y_true, predicted))


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels."""

    def __init__(self, name="accuracy", dtype=None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often thresholded predictions equal binary labels."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class matches one-hot labels."""

    def __init__(self, name="categorical_accuracy", dtype=None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class matches integer labels."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        # Labels have no class axis: no rank matching between labels and predictions.
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        matches = sparse_categorical_accuracy(y_true, y_pred)
        Mean.update_state(self, matches, sample_weight=sample_weight)


class MeanSquaredError(MeanMetricWrapper):
    """The running mean of ``mean_squared_error``."""

    def __init__(self, name="mean_squared_error", dtype=None) -> None:
        super().__init__(losses.mean_squared_error, name=name, dtype=dtype)


_BY_NAME = {
    "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
    "MeanSquaredError": MeanSquaredError,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "SparseCategoricalAccuracy": SparseCategoricalAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "CategoricalAccuracy": CategoricalAccuracy,
    "binary_accuracy": BinaryAccuracy,
    "BinaryAccuracy": BinaryAccuracy,
    "Accuracy": Accuracy,
    "Mean": Mean,
    "Sum": Sum,
}


def get(identifier):
    """A metric from a name (``'mse'``, ``'BinaryAccuracy'``), a metric or a function.

    (``'accuracy'`` in ``compile`` depends on the loss and is resolved there.)

    Raises:
        ValueError: the identifier names no metric.
    """
    if isinstance(identifier, Metric) or (callable(identifier) and not isinstance(identifier, str)):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier](name=identifier)
    raise ValueError(
        f"Unknown metric function: {identifier!r}. Use one of 'accuracy', {sorted(_BY_NAME)}, "
        "a metric object or a function."
    )
