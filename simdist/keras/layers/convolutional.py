"""``Conv2D``: 2-D convolution over ``[batch, height, width, channels]`` inputs."""

from __future__ import annotations

from simdist.core.ops import fused_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.layers._checks import int_pair, padding_name
from simdist.keras.layers._fusion import NOT_FUSABLE, fused_activation
from simdist.keras.layers.conv_base import Conv

__all__ = ["Conv2D", "conv_output_length"]


def conv_output_length(length, kernel: int, padding: str, stride: int, dilation: int = 1):
    """Output size along one axis (``None`` stays ``None``), as Keras computes it."""
    if length is None:
        return None
    span = (kernel - 1) * dilation + 1
    out = length if padding == "SAME" else length - span + 1
    return (out + stride - 1) // stride


class Conv2D(Conv):
    """``activation(conv2d(inputs, kernel) + bias)``, channels_last; kernel ``(kh, kw, in,
    filters)``.

    Raises:
        ValueError: bad ``filters``, ``kernel_size``, ``strides`` or ``padding``; at call, an
            input of another rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'`` or ``groups != 1``.
    """

    _RANK = 2
    _LAYOUT = "(batch, height, width, channels)"
    _sizes = staticmethod(int_pair)
    _padding = staticmethod(padding_name)  # the op's 'VALID' / 'SAME'

    def _forward(self, inputs) -> Tensor:
        # conv2d + bias_add (+ relu) as one fused op, as TF's grappler runs this layer.
        fused = fused_activation(self.activation)
        outputs = fused_ops.conv2d_bias_activation(
            inputs,
            self.kernel,
            self.bias,
            strides=self.strides,  # a tuple of two ints: the ops' fast path
            padding=self.padding,
            dilations=self.dilation_rate,
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
