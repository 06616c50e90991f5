"""``Conv2DTranspose`` and ``Conv1DTranspose``: transposed ("deconvolution") layers.

The layer computes ``activation(conv2d_transpose(inputs, kernel) + bias)`` with Keras's
kernel layout ``(*kernel_size, filters, in_channels)`` (the transpose of a convolution's).
The output size per axis is Keras's ``deconv_output_length``: without ``output_padding``,
``in * stride`` for SAME and ``in * stride + max(span - stride, 0)`` for VALID (``span =
(kernel - 1) * dilation + 1``); with it, ``(in - 1) * stride + span - 2 * pad +
output_padding`` (``pad = span // 2`` for SAME, 0 for VALID). ``Conv1DTranspose`` runs as the
2-D op over a height of 1, as Keras 2 does.
"""

from __future__ import annotations

from simdist.core.ops import array_ops, nn_ops
from simdist.core.ops.conv_transpose_ops import conv2d_transpose
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.layers._checks import int_pair, padding_name
from simdist.keras.layers._weights import add_kernel_and_bias
from simdist.keras.layers.conv1d import _one_int
from simdist.keras.layers.conv_base import Conv

__all__ = ["Conv2DTranspose", "Conv1DTranspose", "deconv_output_length"]


def deconv_output_length(
    length, kernel: int, padding: str, output_padding, stride: int, dilation: int = 1
):
    """Keras's ``conv_utils.deconv_output_length`` (``None`` stays ``None``)."""
    if length is None:
        return None
    span = (kernel - 1) * dilation + 1
    if output_padding is None:
        if padding == "VALID":
            return length * stride + max(span - stride, 0)
        return length * stride
    pad = span // 2 if padding == "SAME" else 0
    return (length - 1) * stride + span - 2 * pad + output_padding


class _ConvTranspose(Conv):
    """What the transposed convolutions share: ``output_padding``, the kernel, the config."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
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
        super().__init__(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
            **kwargs,
        )
        self.output_padding = None
        if output_padding is not None:
            self.output_padding = self._output_padding(output_padding)
            for pad, stride in zip(self.output_padding, self.strides, strict=True):
                if pad >= stride:
                    raise ValueError(
                        f"Strides must be greater than output padding. Received strides="
                        f"{self.strides}, output_padding={self.output_padding}."
                    )

    def _output_padding(self, value) -> tuple[int, ...]:
        pads = (value,) * self._RANK if isinstance(value, int) else tuple(value)
        if len(pads) != self._RANK or not all(isinstance(p, int) and p >= 0 for p in pads):
            raise ValueError(
                f"The `output_padding` argument must be a tuple of {self._RANK} non-negative "
                f"integers. Received: output_padding={value!r}"
            )
        return pads

    def build(self, input_shape) -> None:
        shape = as_shape(input_shape)
        if shape.rank != self._RANK + 2 or shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__} expects inputs of shape {self._LAYOUT} with a known "
                f"channel count; received input_shape={shape}."
            )
        self._channels = int(shape[-1])
        add_kernel_and_bias(self, [*self.kernel_size, self.filters, self._channels], self.filters)
        self.built = True

    def _out_sizes(self, sizes) -> list:
        pads = self.output_padding or (None,) * self._RANK
        return [
            deconv_output_length(size, k, self.padding.upper(), pad, s, d)
            for size, k, pad, s, d in zip(
                sizes, self.kernel_size, pads, self.strides, self.dilation_rate, strict=True
            )
        ]

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        return TensorShape([dims[0], *self._out_sizes(dims[1:-1]), self.filters])

    def get_config(self) -> dict:
        return {**super().get_config(), "output_padding": self.output_padding}


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution, channels_last; kernel ``(kh, kw, filters, in)``.

    Raises:
        ValueError: bad ``filters``, ``kernel_size``, ``strides``, ``padding`` or
            ``output_padding`` (each entry below its stride); at call, an input of another
            rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'``.
    """

    _RANK = 2
    _LAYOUT = "(batch, height, width, channels)"
    _sizes = staticmethod(int_pair)
    _padding = staticmethod(padding_name)

    def _forward(self, inputs) -> Tensor:
        batch, height, width, _ = inputs.shape
        out_h, out_w = self._out_sizes([height, width])
        out = conv2d_transpose(
            inputs,
            self.kernel,
            [batch, out_h, out_w, self.filters],
            strides=self.strides,
            padding=self.padding,
            dilations=self.dilation_rate,
        )
        if self.bias is not None:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)


def _padding_1d(value) -> str:
    return padding_name(value)


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution over ``(batch, steps, channels)``; kernel ``(k, filters,
    in)``.

    Raises:
        ValueError: as ``Conv2DTranspose``.
    """

    _RANK = 1
    _LAYOUT = "(batch, steps, channels)"
    _sizes = staticmethod(_one_int)
    _padding = staticmethod(_padding_1d)

    def _forward(self, inputs) -> Tensor:
        batch, steps, _ = inputs.shape
        (out_steps,) = self._out_sizes([steps])
        images = array_ops.expand_dims(inputs, 1)
        kernel = array_ops.expand_dims(self.kernel, 0)
        out = conv2d_transpose(
            images,
            kernel,
            [batch, 1, out_steps, self.filters],
            strides=(1, self.strides[0]),
            padding=self.padding,
            dilations=(1, self.dilation_rate[0]),
        )
        out = array_ops.squeeze(out, [1])
        if self.bias is not None:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)
