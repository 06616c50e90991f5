"""Layers that move values without computing: ``Reshape``, ``Permute``, ``RepeatVector``,
``ZeroPadding1D``/``2D``, ``UpSampling1D``/``2D`` (``UpSampling2D`` also resizes bilinearly)."""

from __future__ import annotations

import math

from simdist.core.ops import array_ops
from simdist.core.ops.resize_ops import resize_bilinear
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, int_pair, static_shape

__all__ = [
    "Reshape",
    "Permute",
    "RepeatVector",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "UpSampling1D",
    "UpSampling2D",
]


class Reshape(Layer):
    """Reshape each example to ``target_shape`` (without the batch axis; one entry may be -1).

    Raises:
        ValueError: a bad ``target_shape`` (two -1s, a zero or negative entry); at call, a
            total size that ``target_shape`` cannot hold.
    """

    def __init__(self, target_shape, **kwargs) -> None:
        super().__init__(**kwargs)
        shape = (target_shape,) if isinstance(target_shape, int) else tuple(target_shape)
        if sum(1 for d in shape if d == -1) > 1 or any(
            not isinstance(d, int) or (d <= 0 and d != -1) for d in shape
        ):
            raise ValueError(
                "`target_shape` must hold positive integers and at most one -1. Received: "
                f"target_shape={target_shape!r}"
            )
        self.target_shape = shape

    def _resolve(self, per_example: int | None) -> tuple:
        known = math.prod(d for d in self.target_shape if d != -1)
        if -1 not in self.target_shape:
            if per_example is not None and per_example != known:
                raise ValueError(
                    f"total size of new array must be unchanged, input_shape = {per_example} "
                    f"elements per example, output_shape = {list(self.target_shape)}"
                )
            return self.target_shape
        if per_example is None:
            return tuple(None if d == -1 else d for d in self.target_shape)
        if per_example % known:
            raise ValueError(
                f"total size of new array must be unchanged, input_shape = {per_example} "
                f"elements per example, output_shape = {list(self.target_shape)}"
            )
        return tuple(per_example // known if d == -1 else d for d in self.target_shape)

    def call(self, inputs) -> Tensor:
        shape = static_shape(inputs)
        dims = self._resolve(math.prod(shape[1:]))
        return array_ops.reshape(inputs, [shape[0], *dims])

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        rest = dims[1:]
        size = None if any(d is None for d in rest) else math.prod(rest)
        return TensorShape([dims[0], *self._resolve(size)])

    def get_config(self) -> dict:
        return {**super().get_config(), "target_shape": self.target_shape}


class Permute(Layer):
    """Permute the non-batch axes by ``dims`` (1-based, as Keras: ``(2, 1)`` swaps them).

    Raises:
        ValueError: ``dims`` is not a permutation of ``1..len(dims)``.
    """

    def __init__(self, dims, **kwargs) -> None:
        super().__init__(**kwargs)
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                "Invalid permutation argument `dims` for Permute Layer. The set of indices in "
                f"`dims` must be consecutive and start from 1. Received dims={dims}"
            )
        self.dims = dims

    def call(self, inputs) -> Tensor:
        return array_ops.transpose(inputs, [0, *self.dims])

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        return TensorShape([dims[0], *(dims[d] for d in self.dims)])

    def get_config(self) -> dict:
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """``[batch, features]`` -> ``[batch, n, features]``: each example repeated ``n`` times."""

    def __init__(self, n, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"RepeatVector needs a positive integer n, got {n!r}.")
        self.n = n

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=2)
        return array_ops.tile(array_ops.expand_dims(inputs, 1), [1, self.n, 1])

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, features = as_shape(input_shape).as_list()
        return TensorShape([batch, self.n, features])

    def get_config(self) -> dict:
        return {**super().get_config(), "n": self.n}


def _padding_pairs(padding) -> tuple[tuple[int, int], tuple[int, int]]:
    if isinstance(padding, int):
        return ((padding, padding), (padding, padding))
    pair = tuple(padding)
    if len(pair) == 2 and all(isinstance(p, int) for p in pair):
        return ((pair[0], pair[0]), (pair[1], pair[1]))
    if len(pair) == 2 and all(len(tuple(p)) == 2 for p in pair):
        return (tuple(pair[0]), tuple(pair[1]))
    raise ValueError(
        "`padding` should be an int, a tuple of 2 ints (symmetric_height_pad, "
        "symmetric_width_pad), or a tuple of 2 tuples of 2 ints ((top_pad, bottom_pad), "
        f"(left_pad, right_pad)). Received: padding={padding!r}"
    )


class ZeroPadding2D(Layer):
    """Add rows and columns of zeros around ``[batch, height, width, channels]`` images."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's ZeroPadding2D supports channels_last only.")
        self.padding = _padding_pairs(padding)
        if any(p < 0 for pair in self.padding for p in pair):
            raise ValueError(f"`padding` must be non-negative, got {padding!r}.")

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=4)
        return array_ops.pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]), [0, 0]])

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, height, width, channels = as_shape(input_shape).as_list()
        (top, bottom), (left, right) = self.padding
        rows = None if height is None else height + top + bottom
        cols = None if width is None else width + left + right
        return TensorShape([batch, rows, cols, channels])

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": self.padding, "data_format": "channels_last"}


_KERAS_RESIZE_METHODS = (
    "area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest"
)  # fmt: skip


class ZeroPadding1D(Layer):
    """Add ``padding`` (an int, or ``(left, right)``) steps of zeros around ``[batch, steps,
    channels]`` sequences."""

    def __init__(self, padding=1, **kwargs) -> None:
        super().__init__(**kwargs)
        pair = (padding, padding) if isinstance(padding, int) else tuple(padding)
        if len(pair) != 2 or not all(isinstance(p, int) and p >= 0 for p in pair):
            raise ValueError(
                "The `padding` argument must be a tuple of 2 non-negative integers. Received: "
                f"padding={padding!r}"
            )
        self.padding = pair

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=3)
        return array_ops.pad(inputs, [[0, 0], list(self.padding), [0, 0]])

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, steps, channels = as_shape(input_shape).as_list()
        steps = None if steps is None else steps + sum(self.padding)
        return TensorShape([batch, steps, channels])

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": self.padding}


class UpSampling1D(Layer):
    """Repeat each step of ``[batch, steps, channels]`` sequences ``size`` times."""

    def __init__(self, size=2, **kwargs) -> None:
        super().__init__(**kwargs)
        self.size = int(size)

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=3)
        n, steps, channels = static_shape(inputs)
        grid = array_ops.tile(array_ops.reshape(inputs, [n, steps, 1, channels]),
                              [1, 1, self.size, 1])  # fmt: skip
        return array_ops.reshape(grid, [n, steps * self.size, channels])

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, steps, channels = as_shape(input_shape).as_list()
        return TensorShape([batch, None if steps is None else steps * self.size, channels])

    def get_config(self) -> dict:
        return {**super().get_config(), "size": self.size}


class UpSampling2D(Layer):
    """Repeat each row ``size[0]`` and each column ``size[1]`` times (``nearest``), or resize
    by that factor with TF 2's bilinear kernel (``bilinear``: float32 output).

    Raises:
        ValueError: an interpolation Keras does not know.
        NotImplementedError: ``area``, ``bicubic``, ``gaussian``, ``lanczos3/5`` or
            ``mitchellcubic`` (simdist resizes by bilinear and nearest only), or
            channels_first data.
    """

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("simdist's UpSampling2D supports channels_last only.")
        if interpolation not in _KERAS_RESIZE_METHODS:
            raise ValueError(
                "`interpolation` argument should be one of: "
                f"{', '.join(repr(m) for m in _KERAS_RESIZE_METHODS)}. Received: "
                f'"{interpolation}".'
            )
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(
                f"UpSampling2D(interpolation={interpolation!r}) is not in simdist: it resizes "
                "by 'nearest' and 'bilinear' only."
            )
        self.size = int_pair(size, "size")
        self.interpolation = interpolation

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=4)
        n, h, w, c = static_shape(inputs)
        sh, sw = self.size
        if self.interpolation == "bilinear":
            return resize_bilinear(inputs, [h * sh, w * sw])
        grid = array_ops.reshape(inputs, [n, h, 1, w, 1, c])
        grid = array_ops.tile(grid, [1, 1, sh, 1, sw, 1])
        return array_ops.reshape(grid, [n, h * sh, w * sw, c])

    def compute_output_shape(self, input_shape) -> TensorShape:
        batch, height, width, channels = as_shape(input_shape).as_list()
        rows = None if height is None else height * self.size[0]
        cols = None if width is None else width * self.size[1]
        return TensorShape([batch, rows, cols, channels])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "size": self.size,
            "data_format": "channels_last",
            "interpolation": self.interpolation,
        }
