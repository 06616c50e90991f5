"""``MaxPooling2D`` and ``AveragePooling2D`` over ``[batch, height, width, channels]``."""

from __future__ import annotations

from simdist.core.ops import pool_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, int_pair, padding_name
from simdist.keras.layers.convolutional import conv_output_length

__all__ = ["MaxPooling2D", "AveragePooling2D", "MaxPool2D", "AvgPool2D"]


class _Pooling2D(Layer):
    """Windows of ``pool_size`` moved by ``strides`` (default: ``pool_size``), channels_last.

    Raises:
        ValueError: bad ``pool_size``, ``strides`` or ``padding``; at call, an input that is
            not of rank 4.
        NotImplementedError: ``data_format='channels_first'``.
    """

    _OP = None

    def __init__(
        self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's pooling layers support channels_last only.")
        self.pool_size = int_pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else int_pair(strides, "strides")
        self.padding = padding_name(padding)

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=4)
        return type(self)._OP(
            inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding
        )

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, height, width, channels = as_shape(input_shape).as_list()
        rows = conv_output_length(height, self.pool_size[0], self.padding, self.strides[0])
        cols = conv_output_length(width, self.pool_size[1], self.padding, self.strides[1])
        return TensorShape([batch, rows, cols, channels])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding.lower(),
        }


class MaxPooling2D(_Pooling2D):
    """The maximum of each window."""

    _OP = staticmethod(pool_ops.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """The mean of each window (padding excluded from the count, as TF does)."""

    _OP = staticmethod(pool_ops.avg_pool2d)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
