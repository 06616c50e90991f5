"""What the convolution layers share (Keras's ``Conv`` base): arguments, weights, penalties.

Keras's arguments, in Keras's order and with its defaults, are the base's (an int stride
or dilation means the same along every axis). A subclass names its spatial rank
(``_RANK``), how it reads ``kernel_size``/``strides``/``dilation_rate`` (``_sizes``) and
``padding`` (``_padding``), the input layout its errors show (``_LAYOUT``), and its
``_forward``; the base builds the kernel ``(*kernel_size, in,
filters)`` and the bias, checks the input at call, applies the activity regularizer, and
writes the common part of ``get_config``.
"""

from __future__ import annotations

from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.keras import activations, constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, positive_int
from simdist.keras.layers._weights import add_kernel_and_bias

__all__ = ["Conv"]


class Conv(Layer):
    """The shared part of ``Conv1D`` and ``Conv2D`` (channels_last, ``groups=1``)."""

    _RANK = 2
    _LAYOUT = "(batch, height, width, channels)"

    @staticmethod
    def _sizes(value, name: str) -> tuple[int, ...]:
        raise NotImplementedError

    @staticmethod
    def _padding(value) -> str:
        raise NotImplementedError

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
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
        name = type(self).__name__
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(f"simdist's {name} supports data_format='channels_last'.")
        if groups != 1:
            raise NotImplementedError(f"simdist's {name} supports groups=1 only.")
        self.filters = positive_int(filters, "filters")
        self.kernel_size = self._sizes(kernel_size, "kernel_size")
        self.strides = self._sizes(strides, "strides")
        self.padding = self._padding(padding)
        self.dilation_rate = self._sizes(dilation_rate, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` is not compatible with `dilation_rate > 1`.")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self._channels = None

    def build(self, input_shape) -> None:
        shape = as_shape(input_shape)
        if shape.rank != self._RANK + 2 or shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__} expects inputs of shape {self._LAYOUT} with a known "
                f"channel count; received input_shape={shape}."
            )
        self._channels = int(shape[-1])
        add_kernel_and_bias(self, [*self.kernel_size, self._channels, self.filters], self.filters)
        self.built = True

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=self._RANK + 2, axes={-1: self._channels})
        outputs = self._forward(inputs)
        if self.activity_regularizer is None:
            return outputs
        return regularizers.record_activity(self, outputs)

    def _forward(self, inputs) -> Tensor:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding.lower(),
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            **regularizers.penalties_config(self),
        }
