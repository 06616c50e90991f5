"""``UnitNormalization`` and ``GroupNormalization``.

``UnitNormalization`` divides by the L2 norm along ``axis`` (an int or a list), as
``tf.math.l2_normalize``: ``x * rsqrt(max(sum(x^2), 1e-12))``. ``GroupNormalization`` splits
the channels of ``axis`` into ``groups`` groups of consecutive channels and normalises each
example's group by its mean and (biased) variance over the group's channels and every other
non-batch axis (weighted by a mask of the input's shape when one is given), then scales by
``gamma`` and shifts by ``beta`` (one per channel): ``(x - mean) * rsqrt(var + epsilon) *
gamma + beta``. ``groups=-1`` makes one group per channel.
"""

from __future__ import annotations

from simdist.core.ops import array_ops, elementwise_ops, math_ops, reduction_ops
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.keras import constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, static_shape

__all__ = ["UnitNormalization", "GroupNormalization", "l2_normalize"]


def l2_normalize(x, axis) -> Tensor:
    """``x * rsqrt(max(sum(x^2), 1e-12))`` along ``axis`` (TF's ``l2_normalize``)."""
    total = reduction_ops.reduce_sum(elementwise_ops.square(x), axis=axis, keepdims=True)
    return math_ops.multiply(x, elementwise_ops.rsqrt(math_ops.maximum(total, 1e-12)))


def _check_axes(axis, rank: int, layer: str) -> None:
    for a in axis if isinstance(axis, list) else [axis]:
        if not -rank <= a < rank:
            raise ValueError(
                f"Invalid value for `axis` argument of {layer}. Expected {-rank} <= axis < "
                f"{rank}. Received: axis={axis}"
            )


class UnitNormalization(Layer):
    """Scale each example to unit L2 norm along ``axis``.

    Raises:
        TypeError: an ``axis`` that is neither an int nor a list/tuple of ints.
        ValueError: at build, an axis out of range.
    """

    def __init__(self, axis=-1, **kwargs) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(
                "Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                f"Received: axis={axis}"
            )
        self.supports_masking = True

    def build(self, input_shape) -> None:
        _check_axes(self.axis, as_shape(input_shape).rank, "UnitNormalization")
        self.built = True

    def call(self, inputs) -> Tensor:
        if inputs.dtype.name != self.compute_dtype:
            inputs = math_ops.cast(inputs, self.compute_dtype)
        return l2_normalize(inputs, self.axis)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


class GroupNormalization(Layer):
    """Normalise groups of channels per example (see the module docstring).

    Raises:
        ValueError: at build, an unknown channel count, more groups than channels, or a
            channel count that the groups do not divide; at call, an input of another rank
            or channel count.
    """

    def __init__(
        self,
        groups=32,
        axis=-1,
        epsilon=0.001,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups = groups
        self.axis = axis
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self._rank = None

    def build(self, input_shape) -> None:
        dims = as_shape(input_shape).as_list()
        _check_axes(self.axis, len(dims), "GroupNormalization")
        dim = dims[self.axis]
        if dim is None:
            raise ValueError(
                f"Axis {self.axis} of input tensor should have a defined dimension but the "
                f"layer received an input with shape {dims}."
            )
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(
                f"Number of groups ({self.groups}) cannot be more than the number of channels "
                f"({dim})."
            )
        if dim % self.groups != 0:
            raise ValueError(
                f"Number of groups ({self.groups}) must be a multiple of the number of "
                f"channels ({dim})."
            )
        self._rank, self._dim = len(dims), dim
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                "gamma",
                shape=(dim,),
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
        if self.center:
            self.beta = self.add_weight(
                "beta",
                shape=(dim,),
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )
        self.built = True

    def _grouped(self, x, shape: list) -> Tensor:
        axis = self.axis % len(shape)
        grouped = [*shape[:axis], self.groups, shape[axis] // self.groups, *shape[axis + 1 :]]
        return array_ops.reshape(x, grouped)

    def call(self, inputs, mask=None) -> Tensor:
        check_input(self, inputs, ndim=self._rank, axes={self.axis: self._dim})
        shape = list(static_shape(inputs))
        axis = self.axis % len(shape)
        x = self._grouped(inputs, shape)
        reduce = [a for a in range(1, len(shape) + 1) if a != axis]
        if mask is None:
            mean = reduction_ops.reduce_mean(x, axis=reduce, keepdims=True)
            centred = math_ops.subtract(x, mean)
            variance = reduction_ops.reduce_mean(elementwise_ops.square(centred), reduce, True)
        else:
            weights = math_ops.cast(array_ops.broadcast_to(mask, shape), x.dtype)
            weights = self._grouped(weights, shape)
            total = reduction_ops.reduce_sum(weights, axis=reduce, keepdims=True)
            mean = math_ops.divide(
                reduction_ops.reduce_sum(math_ops.multiply(x, weights), reduce, True), total
            )
            centred = math_ops.subtract(x, mean)
            spread = math_ops.multiply(elementwise_ops.square(centred), weights)
            variance = math_ops.divide(reduction_ops.reduce_sum(spread, reduce, True), total)
        factor = elementwise_ops.rsqrt(math_ops.add(variance, self.epsilon))
        broadcast = [1] * len(shape)
        broadcast[axis] = shape[axis] // self.groups
        broadcast.insert(axis, self.groups)
        if self.gamma is not None:
            factor = math_ops.multiply(factor, array_ops.reshape(self.gamma, broadcast))
        out = math_ops.subtract(math_ops.multiply(x, factor), math_ops.multiply(mean, factor))
        if self.beta is not None:
            out = math_ops.add(out, array_ops.reshape(self.beta, broadcast))
        return array_ops.reshape(out, shape)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        def regularizer(obj):
            return None if obj is None else regularizers.serialize(obj)

        def constraint(obj):
            return None if obj is None else constraints.serialize(obj)

        return {
            **super().get_config(),
            "groups": self.groups,
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            "beta_regularizer": regularizer(self.beta_regularizer),
            "gamma_regularizer": regularizer(self.gamma_regularizer),
            "beta_constraint": constraint(self.beta_constraint),
            "gamma_constraint": constraint(self.gamma_constraint),
        }
