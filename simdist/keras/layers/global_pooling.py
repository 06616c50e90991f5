"""Global pooling: the mean or maximum over all spatial (or time) positions of each channel.

``GlobalAveragePooling2D``/``GlobalMaxPooling2D`` take ``[batch, height, width, channels]``;
the 1D forms take ``[batch, steps, channels]``, the 3D ones ``[batch, depth, height, width,
channels]``. ``keepdims=True`` keeps the pooled axes with
size 1.
"""

from __future__ import annotations

from simdist.core.ops import array_ops, math_ops, reduction_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input

__all__ = [
    "GlobalAveragePooling1D",
    "GlobalMaxPooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling2D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling3D",
]


class _GlobalPooling(Layer):
    _RANK = 4
    _REDUCE = None

    def __init__(self, data_format=None, keepdims=False, **kwargs) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError(
                f"simdist's {type(self).__name__} supports data_format='channels_last' only."
            )
        self.keepdims = bool(keepdims)

    def _axes(self) -> list[int]:
        return list(range(1, self._RANK - 1))

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=self._RANK)
        return type(self)._REDUCE(inputs, axis=self._axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        if self.keepdims:
            return TensorShape([dims[0], *([1] * (self._RANK - 2)), dims[-1]])
        return TensorShape([dims[0], dims[-1]])

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": "channels_last", "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling):
    """The mean over height and width of each channel."""

    _REDUCE = staticmethod(reduction_ops.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over height and width of each channel."""

    _REDUCE = staticmethod(reduction_ops.reduce_max)


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps of each channel; with a mask, over the unmasked steps."""

    _RANK = 3
    _REDUCE = staticmethod(reduction_ops.reduce_mean)

    def __init__(self, data_format=None, keepdims=False, **kwargs) -> None:
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None) -> Tensor:
        if mask is None:
            return super().call(inputs)
        check_input(self, inputs, ndim=3)
        weights = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype), 2)
        total = reduction_ops.reduce_sum(
            math_ops.multiply(inputs, weights), axis=1, keepdims=self.keepdims
        )
        count = reduction_ops.reduce_sum(weights, axis=1, keepdims=self.keepdims)
        return math_ops.divide(total, count)

    def compute_mask(self, inputs, mask=None):
        return None  # the steps are gone


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps of each channel."""

    _RANK = 3
    _REDUCE = staticmethod(reduction_ops.reduce_max)


class GlobalAveragePooling3D(_GlobalPooling):
    """The mean over depth, height and width of each channel."""

    _RANK = 5
    _REDUCE = staticmethod(reduction_ops.reduce_mean)


class GlobalMaxPooling3D(_GlobalPooling):
    """The maximum over depth, height and width of each channel."""

    _RANK = 5
    _REDUCE = staticmethod(reduction_ops.reduce_max)
