"""``Conv1D``: 1-D convolution over ``[batch, steps, channels]`` inputs.

It runs as a 2-D convolution over a height of 1 (the inputs become ``[batch, 1, steps,
channels]`` and the kernel ``[1, kernel_size, in, filters]``), as TF's ``conv1d`` does; the
layer's own kernel has Keras's shape ``(kernel_size, in, filters)``. ``padding='causal'``
pads ``(kernel_size - 1) * dilation_rate`` zeros on the left only.
"""

from __future__ import annotations

from simdist.core.ops import array_ops, conv_ops, nn_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras import activations, initializers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, positive_int
from simdist.keras.layers._weights import weight_options
from simdist.keras.layers.convolutional import conv_output_length

__all__ = ["Conv1D"]


def _one_int(value, name: str) -> int:
    item = value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value
    if not isinstance(item, int) or item <= 0:
        raise ValueError(f"The `{name}` argument must be a positive integer. Received: {value!r}")
    return item


class Conv1D(Layer):
    """``activation(conv1d(inputs, kernel) + bias)``; kernel ``(kernel_size, in, filters)``.

    Raises:
        ValueError: bad ``filters``, ``kernel_size``, ``strides`` or ``padding``; at call, an
            input of another rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'`` or ``groups != 1``.
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format="channels_last",
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
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's Conv1D supports data_format='channels_last'.")
        if groups != 1:
            raise NotImplementedError("simdist's Conv1D supports groups=1 only.")
        self.filters = positive_int(filters, "filters")
        self.kernel_size = _one_int(kernel_size, "kernel_size")
        self.strides = _one_int(strides, "strides")
        self.dilation_rate = _one_int(dilation_rate, "dilation_rate")
        padding = str(padding).lower()
        if padding not in ("valid", "same", "causal"):
            raise ValueError(
                "The `padding` argument must be 'valid', 'same' or 'causal'. Received: "
                f"padding={padding!r}"
            )
        self.padding = padding
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self._options = weight_options(
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )
        self._channels = None

    def build(self, input_shape) -> None:
        shape = as_shape(input_shape)
        if shape.rank != 3 or shape[-1] is None:
            raise ValueError(
                "Conv1D expects inputs of shape (batch, steps, channels) with a known channel "
                f"count; received input_shape={shape}."
            )
        self._channels = int(shape[-1])
        self.kernel = self.add_weight(
            "kernel",
            shape=[self.kernel_size, self._channels, self.filters],
            initializer=self.kernel_initializer,
            regularizer=self._options["kernel_regularizer"],
            constraint=self._options["kernel_constraint"],
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.filters],
                initializer=self.bias_initializer,
                regularizer=self._options["bias_regularizer"],
                constraint=self._options["bias_constraint"],
            )
        self.built = True

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=3, axes={-1: self._channels})
        padding = self.padding.upper()
        if self.padding == "causal":
            left = (self.kernel_size - 1) * self.dilation_rate
            inputs = array_ops.pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "VALID"
        images = array_ops.expand_dims(inputs, 1)
        kernel = array_ops.expand_dims(self.kernel, 0)
        out = conv_ops.conv2d(
            images,
            kernel,
            strides=[1, 1, self.strides, 1],
            padding=padding,
            dilations=[1, 1, self.dilation_rate, 1],
        )
        out = array_ops.squeeze(out, [1])
        if self.bias is not None:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, steps, _ = as_shape(input_shape).as_list()
        padding = "SAME" if self.padding == "causal" else self.padding.upper()
        if self.padding == "causal":
            length = conv_output_length(steps, 1, "VALID", self.strides)
        else:
            length = conv_output_length(
                steps, self.kernel_size, padding, self.strides, self.dilation_rate
            )
        return TensorShape([batch, length, self.filters])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": (self.kernel_size,),
            "strides": (self.strides,),
            "padding": self.padding,
            "dilation_rate": (self.dilation_rate,),
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            **self._options.config(),
        }
