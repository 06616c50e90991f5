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
from simdist.keras.layers.conv_base import Conv
from simdist.keras.layers.convolutional import conv_output_length

__all__ = ["Conv1D"]


def _one_int(value, name: str) -> tuple[int]:
    item = value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value
    if not isinstance(item, int) or item <= 0:
        raise ValueError(f"The `{name}` argument must be a positive integer. Received: {value!r}")
    return (item,)


def _padding(value) -> str:
    padding = str(value).lower()
    if padding not in ("valid", "same", "causal"):
        raise ValueError(
            "The `padding` argument must be 'valid', 'same' or 'causal'. Received: "
            f"padding={value!r}"
        )
    return padding


class Conv1D(Conv):
    """``activation(conv1d(inputs, kernel) + bias)``; kernel ``(kernel_size, in, filters)``.

    Raises:
        ValueError: bad ``filters``, ``kernel_size``, ``strides`` or ``padding``; at call, an
            input of another rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'`` or ``groups != 1``.
    """

    _RANK = 1
    _LAYOUT = "(batch, steps, channels)"
    _sizes = staticmethod(_one_int)
    _padding = staticmethod(_padding)  # Keras's 'valid' / 'same' / 'causal'

    def _forward(self, inputs) -> Tensor:
        padding = self.padding.upper()
        (kernel_size,), (stride,), (dilation,) = self.kernel_size, self.strides, self.dilation_rate
        if self.padding == "causal":
            left = (kernel_size - 1) * dilation
            inputs = array_ops.pad(inputs, [[0, 0], [left, 0], [0, 0]])
            padding = "VALID"
        images = array_ops.expand_dims(inputs, 1)
        kernel = array_ops.expand_dims(self.kernel, 0)
        out = conv_ops.conv2d(
            images,
            kernel,
            strides=[1, 1, stride, 1],
            padding=padding,
            dilations=[1, 1, dilation, 1],
        )
        out = array_ops.squeeze(out, [1])
        if self.bias is not None:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, steps, _ = as_shape(input_shape).as_list()
        (kernel_size,), (stride,), (dilation,) = self.kernel_size, self.strides, self.dilation_rate
        if self.padding == "causal":  # as long as SAME: the left padding makes up the span
            length = conv_output_length(steps, 1, "VALID", stride)
        else:
            length = conv_output_length(steps, kernel_size, self.padding.upper(), stride, dilation)
        return TensorShape([batch, length, self.filters])
