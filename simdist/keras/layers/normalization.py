"""``LayerNormalization`` and ``BatchNormalization``.

Both compute ``(x - mean) * rsqrt(variance + epsilon) * gamma + beta`` with the biased
variance, in Keras 2's order: ``inv = rsqrt(variance + epsilon) * gamma``, then
``x * inv + (beta - mean * inv)``.

``BatchNormalization`` (Keras 2):

* ``training=True``: mean and variance of this batch over every axis but ``axis``; then
  ``moving = moving * momentum + batch_stat * (1 - momentum)`` for ``moving_mean`` and
  ``moving_variance``. ``training=False`` or ``None`` (inference, or a frozen layer with
  ``trainable=False``): the moving statistics are used and not updated.
* The moving statistics are ``synchronization=ON_READ, aggregation=MEAN`` variables: under a
  strategy each replica updates its own copy from its own batch, and a read outside the
  replicas (``layer.moving_mean``, ``get_weights``, a checkpoint) gives the MEAN of the copies,
  as in TF. For inputs of rank 4 normalized over the channel axis (1 or 3) in float16/32,
  Keras 2 runs TF's fused kernel, whose moving variance takes the UNBIASED batch variance
  (times ``n / (n - 1)``, ``n`` the values per channel); simdist does the same.
  ``SyncBatchNormalization`` (its own module) all-reduces the batch statistics
  instead, so all replicas use (and store) the global batch's.
* With a Keras mask (``[batch, time]`` for ``[batch, time, features]``) and ``training=True``,
  the batch statistics are those of the unmasked positions (TF's ``weighted_moments``); the
  fused kernel ignores the mask, as in Keras 2. Other layers' masks pass through.
"""

from __future__ import annotations

import logging

import numpy as np

from simdist.core.ops import (
    array_ops,
    creation_ops,
    elementwise_ops,
    math_ops,
    nn_ops,
    reduction_ops,
)
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.core.variables import VariableAggregation, VariableSynchronization
from simdist.keras import initializers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._weights import weight_options

_log = logging.getLogger("simdist")

__all__ = ["LayerNormalization", "BatchNormalization", "normalize"]


def normalize(x, mean, variance, gamma, beta, epsilon: float) -> Tensor:
    """``x * inv + (beta - mean * inv)`` with ``inv = rsqrt(variance + epsilon) * gamma``."""
    inv = elementwise_ops.rsqrt(math_ops.add(variance, epsilon))
    if gamma is not None:
        inv = math_ops.multiply(inv, gamma)
    shift = (
        math_ops.negative(math_ops.multiply(mean, inv))
        if beta is None
        else (math_ops.subtract(beta, math_ops.multiply(mean, inv)))
    )
    return math_ops.add(math_ops.multiply(x, inv), shift)


def _axes(axis, rank: int, layer) -> list[int]:
    items = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in items:
        if not -rank <= a < rank:
            raise ValueError(
                f"Invalid axis for {type(layer).__name__} '{layer.name}': {a} (input rank {rank})."
            )
        out.append(a % rank)
    return sorted(set(out))


class _Normalization(Layer):
    def __init__(
        self,
        axis,
        epsilon,
        center,
        scale,
        beta_initializer,
        gamma_initializer,
        beta_regularizer,
        gamma_regularizer,
        beta_constraint,
        gamma_constraint,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # the mask passes through (Keras 2)
        self.axis = axis if isinstance(axis, int) else tuple(axis)
        self.epsilon = float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self._options = weight_options(
            beta_regularizer=beta_regularizer,
            gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint,
            gamma_constraint=gamma_constraint,
        )
        self._rank = None

    def _build_affine(self, input_shape) -> list[int]:
        shape = as_shape(input_shape)
        self._rank = shape.rank
        axes = _axes(self.axis, shape.rank, self)
        for a in axes:
            if shape[a] is None:
                raise ValueError(
                    f"Axis {a} of input tensor should have a defined dimension but the layer "
                    f"received an input with shape {shape}."
                )
        self._param_shape = [int(shape[a]) for a in axes]
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                "gamma",
                shape=self._param_shape,
                initializer=self.gamma_initializer,
                regularizer=self._options["gamma_regularizer"],
                constraint=self._options["gamma_constraint"],
            )
        if self.center:
            self.beta = self.add_weight(
                "beta",
                shape=self._param_shape,
                initializer=self.beta_initializer,
                regularizer=self._options["beta_regularizer"],
                constraint=self._options["beta_constraint"],
            )
        return axes

    def _broadcast(self, value, rank: int, axes: list[int]):
        """A parameter of shape ``[d_axis...]`` reshaped to broadcast against the input."""
        if value is None or axes == [rank - 1]:
            return value
        from simdist.core.ops import array_ops

        shape = [1] * rank
        for a, size in zip(axes, self._param_shape, strict=True):
            shape[a] = size
        return array_ops.reshape(value, shape)

    def compute_output_shape(self, input_shape):
        return input_shape

    def _base_config(self) -> dict:
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "beta_initializer": initializers.serialize(self.beta_initializer),
            "gamma_initializer": initializers.serialize(self.gamma_initializer),
            **self._options.config(),
        }


class LayerNormalization(_Normalization):
    """Normalize each example over ``axis`` (default the last), then scale and shift."""

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
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
        super().__init__(
            axis,
            epsilon,
            center,
            scale,
            beta_initializer,
            gamma_initializer,
            beta_regularizer,
            gamma_regularizer,
            beta_constraint,
            gamma_constraint,
            **kwargs,
        )

    def build(self, input_shape) -> None:
        self._axes = self._build_affine(input_shape)
        self.built = True

    def call(self, inputs) -> Tensor:
        rank = inputs.shape.rank
        mean, variance = nn_ops.moments(inputs, self._axes, keepdims=True)
        gamma = self._broadcast(self.gamma, rank, self._axes)
        beta = self._broadcast(self.beta, rank, self._axes)
        return normalize(inputs, mean, variance, gamma, beta, self.epsilon)

    def get_config(self) -> dict:
        return self._base_config()


class BatchNormalization(_Normalization):
    """Normalize over the batch (and all axes but ``axis``); see the module docstring.

    Raises:
        ValueError: at build, an ``axis`` outside the input's rank or of unknown size.
        NotImplementedError: ``renorm=True`` or ``virtual_batch_size``.
    """

    _SYNCHRONIZED = False

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        renorm=False,
        virtual_batch_size=None,
        fused=None,
        **kwargs,
    ) -> None:
        if kwargs.pop("adjustment", None) is not None:
            raise NotImplementedError(
                "simdist's BatchNormalization does not implement `adjustment`; leave it None."
            )
        kwargs.pop("renorm_clipping", None)  # they matter only with renorm=True (refused)
        kwargs.pop("renorm_momentum", None)
        super().__init__(
            axis,
            epsilon,
            center,
            scale,
            beta_initializer,
            gamma_initializer,
            beta_regularizer,
            gamma_regularizer,
            beta_constraint,
            gamma_constraint,
            **kwargs,
        )
        if renorm or virtual_batch_size is not None:
            raise NotImplementedError(
                "simdist's BatchNormalization does not implement renorm or virtual_batch_size."
            )
        self.momentum = float(momentum)
        self._fused_arg = fused
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape) -> None:
        self._axes = self._build_affine(input_shape)
        self._reduction_axes = [a for a in range(self._rank) if a not in self._axes]
        for name, init in (
            ("moving_mean", self.moving_mean_initializer),
            ("moving_variance", self.moving_variance_initializer),
        ):
            variable = self.add_weight(
                name,
                shape=self._param_shape,
                initializer=init,
                trainable=False,
                synchronization=VariableSynchronization.ON_READ,
                aggregation=VariableAggregation.MEAN,
            )
            object.__setattr__(self, name, variable)
        self.built = True

    def _batch_moments(self, inputs, mask=None):
        """Mean and variance of this batch over the reduction axes (keepdims=False); with a
        Keras mask, of the unmasked positions only (TF's ``weighted_moments``)."""
        if mask is None:
            return nn_ops.moments(inputs, self._reduction_axes)
        weights = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype), -1)
        axes = self._reduction_axes
        count = reduction_ops.reduce_sum(
            math_ops.add(weights, creation_ops.zeros_like(inputs)), axis=axes
        )
        total = reduction_ops.reduce_sum(math_ops.multiply(weights, inputs), axis=axes)
        mean = math_ops.divide(total, count)
        centred = math_ops.subtract(inputs, mean)
        spread = reduction_ops.reduce_sum(
            math_ops.multiply(weights, math_ops.multiply(centred, centred)), axis=axes
        )
        return mean, math_ops.divide(spread, count)

    def call(self, inputs, training=None, mask=None) -> Tensor:
        rank = inputs.shape.rank
        if training is None or not self.trainable:
            training = False
        gamma = self._broadcast(self.gamma, rank, self._axes)
        beta = self._broadcast(self.beta, rank, self._axes)
        if not training:
            mean = self._broadcast(self.moving_mean, rank, self._axes)
            variance = self._broadcast(self.moving_variance, rank, self._axes)
            return normalize(inputs, mean, variance, gamma, beta, self.epsilon)
        if mask is not None and self._fused(rank):
            _log.warning(
                "BatchNormalization with fused=True ignores the mask (as Keras 2): pass "
                "fused=False for statistics over the unmasked positions."
            )
            mask = None
        mean, variance = self._batch_moments(inputs, mask)
        self._update_moving(self.moving_mean, mean)
        moving_variance = variance
        if self._fused(rank):
            count = int(np.prod([inputs.shape[a] for a in self._reduction_axes]))
            moving_variance = math_ops.multiply(variance, count / max(count - 1, 1))
        self._update_moving(self.moving_variance, moving_variance)
        return normalize(
            inputs,
            self._broadcast(mean, rank, self._axes),
            self._broadcast(variance, rank, self._axes),
            gamma,
            beta,
            self.epsilon,
        )

    def _fused(self, rank: int) -> bool:
        """Whether Keras 2 would run TF's fused kernel for this layer (see the docstring)."""
        return (
            not self._SYNCHRONIZED
            and self._fused_arg is not False
            and rank == 4
            and self._axes in ([1], [3])
            and self.dtype in ("float16", "float32")
        )

    def _update_moving(self, variable, value) -> None:
        # moving - (moving - value) * (1 - momentum), Keras 2's assign_moving_average
        decay = 1.0 - self.momentum
        current = variable.read_value() if hasattr(variable, "read_value") else variable
        delta = math_ops.multiply(math_ops.subtract(current, value._value), decay)
        variable.assign_sub(delta)

    def get_config(self) -> dict:
        return {
            **self._base_config(),
            "momentum": self.momentum,
            "moving_mean_initializer": initializers.serialize(self.moving_mean_initializer),
            "moving_variance_initializer": initializers.serialize(self.moving_variance_initializer),
        }
