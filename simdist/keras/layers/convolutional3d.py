"""``Conv3D``, ``MaxPooling3D`` and ``AveragePooling3D`` over ``[batch, depth, height, width,
channels]`` (channels_last), on ``simdist.core.ops.conv3d_ops``."""

from __future__ import annotations

from simdist.core.ops import conv3d_ops, nn_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, padding_name
from simdist.keras.layers.conv_base import Conv
from simdist.keras.layers.convolutional import conv_output_length

__all__ = ["Conv3D", "MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D"]


def _three(value, name: str) -> tuple[int, int, int]:
    """An int or 3 ints as 3 positive ints (Keras's normalize_tuple)."""
    triple = (value, value, value) if isinstance(value, int) else tuple(value)
    if len(triple) != 3 or not all(isinstance(v, int) and v > 0 for v in triple):
        raise ValueError(
            f"The `{name}` argument must be a tuple of 3 positive integers. Received: "
            f"{name}={value!r}"
        )
    return triple


def _padding(value) -> str:
    return padding_name(value).lower()


class Conv3D(Conv):
    """``activation(conv3d(inputs, kernel) + bias)``; kernel ``(kd, kh, kw, in, filters)``.

    Raises:
        ValueError: bad ``filters``, ``kernel_size``, ``strides`` or ``padding``; at call, an
            input of another rank or channel count than the layer was built for.
        NotImplementedError: ``data_format='channels_first'`` or ``groups != 1``.
    """

    _RANK = 3
    _LAYOUT = "(batch, depth, height, width, channels)"
    _sizes = staticmethod(_three)
    _padding = staticmethod(_padding)

    def _forward(self, inputs) -> Tensor:
        out = conv3d_ops.conv3d(
            inputs,
            self.kernel,
            strides=[1, *self.strides, 1],
            padding=self.padding.upper(),
            dilations=[1, *self.dilation_rate, 1],
        )
        if self.bias is not None:
            out = nn_ops.bias_add(out, self.bias)
        return self.activation(out)

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, *sizes, _ = as_shape(input_shape).as_list()
        padding = self.padding.upper()
        spatial = [
            conv_output_length(size, kernel, padding, stride, dilation)
            for size, kernel, stride, dilation in zip(
                sizes, self.kernel_size, self.strides, self.dilation_rate, strict=True
            )
        ]
        return TensorShape([batch, *spatial, self.filters])


class _Pooling3D(Layer):
    """Windows of ``pool_size`` moved by ``strides`` (default: ``pool_size``), channels_last.

    Raises:
        ValueError: bad ``pool_size``, ``strides`` or ``padding``; at call, an input that is
            not of rank 5.
        NotImplementedError: ``data_format='channels_first'``.
    """

    _OP = None

    def __init__(
        self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's pooling layers support channels_last only.")
        self.pool_size = _three(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _three(strides, "strides")
        self.padding = padding_name(padding)

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=5)
        return type(self)._OP(inputs, [1, *self.pool_size, 1], [1, *self.strides, 1], self.padding)

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, *sizes, channels = as_shape(input_shape).as_list()
        spatial = [
            conv_output_length(size, window, self.padding, stride)
            for size, window, stride in zip(sizes, self.pool_size, self.strides, strict=True)
        ]
        return TensorShape([batch, *spatial, channels])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "padding": self.padding.lower(),
            "strides": self.strides,
            "data_format": "channels_last",
        }


class MaxPooling3D(_Pooling3D):
    """The maximum of each window."""

    _OP = staticmethod(conv3d_ops.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """The mean of each window (padding excluded from the count, as TF does)."""

    _OP = staticmethod(conv3d_ops.avg_pool3d)


MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
