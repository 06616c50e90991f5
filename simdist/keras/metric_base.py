"""``tf.keras.metrics.Metric`` and the reducing metrics: Reduce, Sum, Mean, MeanMetricWrapper.

A metric is a Layer whose state lives in variables created with
``synchronization=ON_READ, aggregation=SUM, trainable=False``: under a strategy each replica
accumulates its own copy and reading the value sums them. ``update_state`` accumulates,
``result`` reads (float32 by default), ``reset_state`` zeroes; calling the metric updates
and returns the result. Metric variables are not weights of the model that holds the
metric.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdist.core import step_hooks
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor
from simdist.core.variables import VariableAggregation, VariableSynchronization
from simdist.keras.engine.base_layer import Layer
from simdist.keras.losses_utils import squeeze_or_expand_dimensions

__all__ = ["Metric", "Reduce", "Sum", "Mean", "MeanMetricWrapper"]


class Metric(Layer):
    """Base class: subclasses create state with :meth:`add_weight` and implement
    ``update_state`` and ``result``."""

    _TRACKS = False

    def __init__(self, name=None, dtype=None, **kwargs) -> None:
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.built = True

    def get_config(self) -> dict:
        """Keras 2's metric config: ``name`` and ``dtype`` (a metric is never trainable)."""
        config = super().get_config()
        config.pop("trainable", None)
        return config

    @classmethod
    def from_config(cls, config: dict):
        # configs written by Layer.get_config carried 'trainable', which no metric takes
        return cls(**{k: v for k, v in config.items() if k != "trainable"})

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
        step_hooks.note("metric", metric=self)
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
