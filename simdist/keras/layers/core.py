"""Core layers: ``Dense``, ``Flatten``, ``Dropout``, ``Activation``, ``ReLU``."""

from __future__ import annotations

import math

from simdist.core.ops import array_ops, fused_ops, math_ops, nn_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras import activations, constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, positive_int, static_shape
from simdist.keras.layers._fusion import NOT_FUSABLE, fused_activation
from simdist.keras.layers._weights import add_kernel_and_bias

__all__ = ["Dense", "Flatten", "Dropout", "Activation", "ReLU"]


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis of inputs of rank >= 2.

    Raises:
        ValueError: ``units`` is not a positive integer; at build, an unknown last input
            dimension; at call, an input whose last dimension differs from the built one.
    """

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # the mask passes through (Keras 2)
        self.units = positive_int(units, "units")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self._last_dim = None

    def build(self, input_shape) -> None:
        shape = as_shape(input_shape)
        last = shape[-1] if shape.rank else None
        if last is None:
            raise ValueError(
                "The last dimension of the inputs to a Dense layer should be defined. Found "
                f"None. Full input shape received: {shape}"
            )
        self._last_dim = int(last)
        add_kernel_and_bias(self, [self._last_dim, self.units], self.units)
        self.built = True

    def call(self, inputs) -> Tensor:
        outputs = self._forward(inputs)
        if self.activity_regularizer is None:
            return outputs
        return regularizers.record_activity(self, outputs)

    def _forward(self, inputs) -> Tensor:
        check_input(self, inputs, min_ndim=2, axes={-1: self._last_dim})
        fused = fused_activation(self.activation)
        if len(static_shape(inputs)) == 2:  # matmul + bias_add (+ relu) as one fused op
            outputs = fused_ops.dense_bias_activation(
                inputs,
                self.kernel,
                self.bias,
                activation=None if fused is NOT_FUSABLE else fused,
            )
            return self.activation(outputs) if fused is NOT_FUSABLE else outputs
        outputs = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self.activation(outputs)

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        return TensorShape([*dims[:-1], self.units])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            **regularizers.penalties_config(self),
        }


class Flatten(Layer):
    """Reshape ``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]`` (``[batch]`` to
    ``[batch, 1]``)."""

    def __init__(self, data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's Flatten supports channels_last data only.")

    def call(self, inputs) -> Tensor:
        shape = static_shape(inputs)
        if len(shape) == 1:
            return array_ops.expand_dims(inputs, 1)
        # the product of the known dimensions, as Keras: an empty batch (a replica's share
        # of a last partial batch) flattens too, where reshape(x, [0, -1]) cannot infer -1
        rest = shape[1:]
        if any(d is None for d in rest):
            return array_ops.reshape(inputs, [shape[0], -1])
        return array_ops.reshape(inputs, [shape[0], math.prod(rest)])

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": "channels_last"}

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        if len(dims) <= 1:
            return TensorShape([*dims, 1])
        rest = dims[1:]
        size = None if any(d is None for d in rest) else math.prod(rest)
        return TensorShape([dims[0], size])


class Dropout(Layer):
    """Zero a fraction ``rate`` of the inputs (scaling the rest by ``1/(1-rate)``), only when
    called with ``training=True``; otherwise the identity.

    Raises:
        ValueError: ``rate`` outside [0, 1].
    """

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # the mask passes through (Keras 2)
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise ValueError(
                "Invalid value received for argument `rate`. Expected a float value between "
                f"0 and 1. Received: rate={rate}"
            )
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=None) -> Tensor:
        if not training or self.rate == 0:
            return inputs
        return nn_ops.dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": self.noise_shape,
            "seed": self.seed,
        }


class Activation(Layer):
    """Apply an activation function (a name or a callable)."""

    def __init__(self, activation, **kwargs) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # the mask passes through (Keras 2)
        self.activation = activations.get(activation)

    def call(self, inputs) -> Tensor:
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class ReLU(Layer):
    """``relu`` with optional ``max_value``, ``negative_slope`` and ``threshold``.

    Raises:
        ValueError: a negative ``max_value`` or ``negative_slope``.
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True  # the mask passes through (Keras 2)
        if max_value is not None and max_value < 0.0:
            raise ValueError(f"max_value of a ReLU layer cannot be negative, got {max_value}.")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError(f"negative_slope of a ReLU layer must be >= 0, got {negative_slope}.")
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold

    def call(self, inputs) -> Tensor:
        return activations.relu(
            inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold
        )

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }
