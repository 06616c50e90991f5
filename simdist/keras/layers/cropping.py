"""``Cropping2D``: remove rows and columns at the edges of ``[batch, height, width, channels]``
images (channels_last), as Keras 2."""

from __future__ import annotations

from simdist.core.ops import slicing_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, static_shape
from simdist.keras.layers.reshaping import _padding_pairs

__all__ = ["Cropping2D"]


class Cropping2D(Layer):
    """``inputs[:, top:height - bottom, left:width - right, :]``.

    ``cropping`` is an int (all four sides), a pair ``(rows, cols)`` (symmetric), or
    ``((top, bottom), (left, right))``.

    Raises:
        ValueError: a negative cropping; at call, a crop that leaves no rows or columns.
        NotImplementedError: ``data_format='channels_first'``.
    """

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's Cropping2D supports channels_last only.")
        self.cropping = _padding_pairs(cropping)
        if any(c < 0 for pair in self.cropping for c in pair):
            raise ValueError(f"`cropping` must be non-negative, got {cropping!r}.")
        self.supports_masking = False

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=4)
        _, height, width, _ = static_shape(inputs)
        (top, bottom), (left, right) = self.cropping
        if top + bottom >= height or left + right >= width:
            raise ValueError(
                f"Cropping {self.cropping} leaves nothing of an input of height {height} and "
                f"width {width}."
            )
        rows, cols = slice(top, height - bottom), slice(left, width - right)
        return slicing_ops.getitem(inputs, (slice(None), rows, cols, slice(None)))

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, height, width, channels = as_shape(input_shape).as_list()
        (top, bottom), (left, right) = self.cropping
        rows = None if height is None else height - top - bottom
        cols = None if width is None else width - left - right
        return TensorShape([batch, rows, cols, channels])

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": self.cropping}
