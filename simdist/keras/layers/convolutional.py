"""``Conv2D``: 2-D convolution over ``[batch, height, width, channels]`` inputs."""

from __future__ import annotations

from simdist.core.ops import fused_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras import activations, constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, int_pair, padding_name, positive_int
from simdist.keras.layers._fusion import NOT_FUSABLE, fused_activation

__all__ = ["Conv2D", "conv_output_length"]


def conv_output_length(length, kernel: int, padding: str, stride: int, dilation: int = 1):
    """Output size along one axis (``None`` stays ``None``), as Keras computes it."""
    if length is None:
        return None
    span = (kernel - 1) * dilation + 1
    out = length if padding == "SAME" else length - span + 1
    return (out + stride - 1) // stride


class Conv2D(Layer):
    """``activation(conv2d(inputs, kernel) + bias)``, channels_last; kernel ``(kh, kw, in,
    filters)``.

    Raises:
        ValueError: bad ``filters``, ``kernel_size``, ``strides`` or ``padding``; at call, an
            input of another rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'`` or ``groups != 1``.
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
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
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's Conv2D supports data_format='channels_last'.")
        if groups != 1:
            raise NotImplementedError("simdist's Conv2D supports groups=1 only.")
        self.filters = positive_int(filters, "filters")
        self.kernel_size = int_pair(kernel_size, "kernel_size")
        self.strides = int_pair(strides, "strides")
        self.padding = padding_name(padding)
        self.dilation_rate = int_pair(dilation_rate, "dilation_rate")
        if self.strides != (1, 1) and self.dilation_rate != (1, 1):
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
        if shape.rank != 4 or shape[-1] is None:
            raise ValueError(
                f"Conv2D expects inputs of shape (batch, height, width, channels) with a known "
                f"channel count; received input_shape={shape}."
            )
        self._channels = int(shape[-1])
        self.kernel = self.add_weight(
            "kernel",
            shape=[*self.kernel_size, self._channels, self.filters],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def call(self, inputs) -> Tensor:
        outputs = self._forward(inputs)
        if self.activity_regularizer is None:
            return outputs
        return regularizers.record_activity(self, outputs)

    def _forward(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=4, axes={-1: self._channels})
        # conv2d + bias_add (+ relu) as one fused op, as TF's grappler runs this layer.
        fused = fused_activation(self.activation)
        outputs = fused_ops.conv2d_bias_activation(
            inputs,
            self.kernel,
            self.bias,
            strides=list(self.strides),
            padding=self.padding,
            dilations=list(self.dilation_rate),
            activation=None if fused is NOT_FUSABLE else fused,
        )
        return self.activation(outputs) if fused is NOT_FUSABLE else outputs

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, height, width, _ = as_shape(input_shape).as_list()
        rows = conv_output_length(
            height, self.kernel_size[0], self.padding, self.strides[0], self.dilation_rate[0]
        )
        cols = conv_output_length(
            width, self.kernel_size[1], self.padding, self.strides[1], self.dilation_rate[1]
        )
        return TensorShape([batch, rows, cols, self.filters])

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
