"""``Rescaling`` (``x * scale + offset``) and ``Normalization`` (``(x - mean) / std``, ``adapt``).

``Normalization`` (Keras 2): ``(x - mean) / maximum(sqrt(variance), 1e-7)``, or with
``invert=True`` ``x * sqrt(variance) + mean``. ``mean``/``variance`` are given
(constants), or learned by ``adapt(data)``: the mean and population variance of every
value along each index of ``axis`` (default the last axis; ``axis=None`` one scalar),
combined batch by batch as a running mean/variance over ``count`` values. Learned ones are
the non-trainable weights ``mean``, ``variance``, ``count`` (shaped to broadcast against the
input: ``(1, features)``).
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import elementwise_ops, math_ops
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers.preprocessing._inputs import adapt_batches

__all__ = ["Rescaling", "Normalization"]

_EPSILON = 1e-7


class Rescaling(Layer):
    """``inputs * scale + offset``, in the layer's dtype (integer images become float32)."""

    def __init__(self, scale, offset=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs) -> Tensor:
        x = convert_to_tensor(inputs)
        if x.dtype.name != self.dtype:
            x = math_ops.cast(x, self.dtype)
        scale = np.asarray(self.scale, dtype=self.dtype)
        offset = np.asarray(self.offset, dtype=self.dtype)
        return math_ops.add(math_ops.multiply(x, scale), offset)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Normalization(Layer):
    """Standardize features with a mean and variance given or learned by ``adapt``.

    Raises:
        ValueError: only one of ``mean``/``variance`` given; at build, an ``axis`` outside
            the input; at call, before ``adapt`` when neither was given.
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs) -> None:
        super().__init__(**kwargs)
        if (mean is None) != (variance is None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. Got "
                f"mean: {mean} and variance: {variance}"
            )
        if axis is None:
            axis = ()
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis)
        self.input_mean, self.input_variance = mean, variance
        self.invert = bool(invert)
        self._adapted = mean is not None

    def build(self, input_shape) -> None:
        shape = as_shape(input_shape).as_list()
        rank = len(shape)
        for a in self.axis:
            if not -rank <= a < rank:
                raise ValueError(
                    f"All `axis` values must be in the range [-ndim, ndim). Received inputs "
                    f"with ndim={rank}, while axis={self.axis}"
                )
        self._keep = sorted(a % rank for a in self.axis)
        self._stat_shape = [shape[a] if a in self._keep else 1 for a in range(rank)]
        if any(d is None for d in self._stat_shape):
            raise ValueError(
                f"All `axis` values to be kept must have known shape. Got axis: {self.axis}, "
                f"input shape: {shape}"
            )
        if self.input_mean is not None:  # given: constants, not weights (as Keras)
            mean = np.broadcast_to(np.asarray(self.input_mean, self.dtype), self._stat_shape)
            variance = np.broadcast_to(
                np.asarray(self.input_variance, self.dtype), self._stat_shape
            )
            object.__setattr__(self, "mean", convert_to_tensor(mean.copy()))
            object.__setattr__(self, "variance", convert_to_tensor(variance.copy()))
            self.built = True
            return
        self.mean = self.add_weight(
            "mean", shape=self._stat_shape, initializer="zeros", trainable=False
        )
        self.variance = self.add_weight(
            "variance", shape=self._stat_shape, initializer="ones", trainable=False
        )
        self.count = self.add_weight(
            "count", shape=(), dtype="int64", initializer="zeros", trainable=False
        )
        self.built = True

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Learn ``mean`` and ``variance`` from ``data`` (an array or a Dataset of batches)."""
        total, mean, m2 = 0, None, None
        for batch in adapt_batches(data, batch_size, steps):
            values = np.asarray(batch, dtype=np.float64)
            if values.ndim == 1 and self._keep_rank_one():
                values = values[:, None]
            if not self.built:
                self._maybe_build(as_shape((None, *values.shape[1:])))
            reduce_axes = tuple(a for a in range(values.ndim) if a not in self._keep)
            count = int(np.prod([values.shape[a] for a in reduce_axes])) if reduce_axes else 1
            batch_mean = values.mean(axis=reduce_axes, keepdims=True)
            batch_m2 = ((values - batch_mean) ** 2).sum(axis=reduce_axes, keepdims=True)
            if mean is None:
                total, mean, m2 = count, batch_mean, batch_m2
                continue
            combined = total + count
            delta = batch_mean - mean
            mean = mean + delta * (count / combined)
            m2 = m2 + batch_m2 + delta**2 * (total * count / combined)
            total = combined
        if mean is None:
            raise ValueError("Normalization.adapt received no data.")
        if self.input_mean is not None:
            raise ValueError(
                "Normalization was given mean= and variance=; adapt() cannot change them."
            )
        self.mean.assign(mean.reshape(self._stat_shape).astype(self.dtype))
        self.variance.assign((m2 / total).reshape(self._stat_shape).astype(self.dtype))
        self.count.assign(np.asarray(total, np.int64))
        self._adapted = True

    def _keep_rank_one(self) -> bool:
        return bool(self.axis) and not self.built

    def call(self, inputs) -> Tensor:
        if not self._adapted:
            raise ValueError(
                f"Normalization layer '{self.name}' has no mean and variance: call "
                "layer.adapt(data) or pass mean= and variance= first."
            )
        x = convert_to_tensor(inputs)
        if x.dtype.name != self.dtype:
            x = math_ops.cast(x, self.dtype)
        std = elementwise_ops.sqrt(convert_to_tensor(self.variance))
        if self.invert:
            return math_ops.add(math_ops.multiply(x, std), self.mean)
        std = math_ops.maximum(std, np.asarray(_EPSILON, self.dtype))
        return math_ops.divide(math_ops.subtract(x, self.mean), std)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        def plain(value):
            return None if value is None else np.asarray(value).tolist()

        return {
            **super().get_config(),
            "axis": self.axis,
            "mean": plain(self.input_mean),
            "variance": plain(self.input_variance),
            "invert": self.invert,
        }
