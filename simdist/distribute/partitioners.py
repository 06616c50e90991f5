"""``tf.distribute.experimental.partitioners``: how many shards a variable is split into.

A partitioner is called as ``partitioner(shape, dtype, axis=0)`` and returns one count per
axis: the number of shards along ``axis`` and 1 elsewhere. ``ParameterServerStrategy`` asks
it for every variable of rank >= 1 created in its scope and splits along the first axis
(see :func:`shard_offsets` for where the cuts go). The counts follow TF's rules exactly:

>>> import simdist as tf
>>> FixedShardsPartitioner(num_shards=2)(tf.TensorShape([10, 3]), tf.float32)
[2, 1]
>>> MinSizePartitioner(min_shard_bytes=4, max_shards=2)(tf.TensorShape([6, 1]), tf.float32)
[2, 1]
>>> MinSizePartitioner(min_shard_bytes=4, max_shards=10)(tf.TensorShape([6, 1]), tf.float32)
[6, 1]
>>> MaxSizePartitioner(max_shard_bytes=4)(tf.TensorShape([6, 1]), tf.float32)
[6, 1]
>>> MaxSizePartitioner(max_shard_bytes=4, max_shards=2)(tf.TensorShape([6, 1]), tf.float32)
[2, 1]
>>> MaxSizePartitioner(max_shard_bytes=1024)(tf.TensorShape([6, 1]), tf.float32)
[1, 1]
"""

from __future__ import annotations

import math

from simdist.core import dtypes
from simdist.core.shape import TensorShape, as_shape

__all__ = [
    "Partitioner",
    "FixedShardsPartitioner",
    "MinSizePartitioner",
    "MaxSizePartitioner",
    "shard_offsets",
]


def _element_bytes(dtype, bytes_per_string: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    if dtype == dtypes.string:
        return bytes_per_string
    return dtype.size


def _checked_shape(shape, axis: int) -> TensorShape:
    shape = as_shape(shape)
    if shape.rank is None or not shape.is_fully_defined():
        raise ValueError(f"shape is not fully defined: {shape}")
    if not 0 <= axis < shape.rank:
        raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {shape}")
    return shape


def _positive(name: str, value) -> None:
    if value < 1:
        raise ValueError(f"Argument `{name}` must be positive. Received: {value}")


class Partitioner:
    """Base class: ``__call__(shape, dtype, axis=0)`` returns the shard count of each axis."""

    def __call__(self, shape, dtype, axis: int = 0) -> list[int]:
        raise NotImplementedError(
            f"{type(self).__name__} must implement __call__(shape, dtype, axis=0)."
        )


class FixedShardsPartitioner(Partitioner):
    """``num_shards`` shards (fewer when the axis is shorter).

    Args:
        num_shards: the number of shards.
    """

    def __init__(self, num_shards: int) -> None:
        self._num_shards = num_shards

    def __call__(self, shape, dtype, axis: int = 0) -> list[int]:
        shape = _checked_shape(shape, axis)
        result = [1] * shape.rank
        result[axis] = min(self._num_shards, shape[axis])
        return result


class MinSizePartitioner(Partitioner):
    """As many shards as keep each at least ``min_shard_bytes``, at most ``max_shards``.

    The count is ``max(1, min(axis length, max_shards, ceil(total bytes / min_shard_bytes)))``.

    Args:
        min_shard_bytes: minimum bytes per shard (256 KiB by default).
        max_shards: upper bound on the number of shards (1 by default).
        bytes_per_string: the assumed size of one string element.

    Raises:
        ValueError: an argument below 1.
    """

    def __init__(
        self, min_shard_bytes: int = 256 << 10, max_shards: int = 1, bytes_per_string: int = 16
    ) -> None:
        _positive("min_shard_bytes", min_shard_bytes)
        _positive("max_shards", max_shards)
        _positive("bytes_per_string", bytes_per_string)
        self._min_shard_bytes = min_shard_bytes
        self._max_shards = max_shards
        self._bytes_per_string = bytes_per_string

    def __call__(self, shape, dtype, axis: int = 0) -> list[int]:
        shape = _checked_shape(shape, axis)
        total = shape.num_elements() * _element_bytes(dtype, self._bytes_per_string)
        wanted = int(math.ceil(total / self._min_shard_bytes))
        result = [1] * shape.rank
        result[axis] = max(1, min(shape[axis], self._max_shards, wanted))
        return result


class MaxSizePartitioner(Partitioner):
    """As few shards as keep each at most ``max_shard_bytes`` (``max_shards`` caps the count).

    A shard holds whole slices along ``axis``: ``slices = max(1, floor(max_shard_bytes /
    bytes of one slice))`` and the count is ``ceil(axis length / slices)``.

    Args:
        max_shard_bytes: the most bytes a shard may hold.
        max_shards: optional cap on the count (then shards may exceed ``max_shard_bytes``).
        bytes_per_string: the assumed size of one string element.

    Raises:
        ValueError: an argument below 1.
    """

    def __init__(
        self, max_shard_bytes: int, max_shards: int | None = None, bytes_per_string: int = 16
    ) -> None:
        _positive("max_shard_bytes", max_shard_bytes)
        if max_shards is not None:
            _positive("max_shards", max_shards)
        _positive("bytes_per_string", bytes_per_string)
        self._max_shard_bytes = max_shard_bytes
        self._max_shards = max_shards
        self._bytes_per_string = bytes_per_string

    def __call__(self, shape, dtype, axis: int = 0) -> list[int]:
        shape = _checked_shape(shape, axis)
        element = _element_bytes(dtype, self._bytes_per_string)
        slice_bytes = (shape.num_elements() / shape[axis]) * element if shape[axis] else element
        slices_per_shard = max(1, math.floor(self._max_shard_bytes / slice_bytes))
        shards = int(math.ceil(shape[axis] / slices_per_shard))
        if self._max_shards:
            shards = min(self._max_shards, shards)
        result = [1] * shape.rank
        result[axis] = shards
        return result


def shard_offsets(length: int, num_shards: int) -> list[int]:
    """Where ``num_shards`` contiguous shards of an axis of ``length`` start (and the end).

    TF's "div" rule: every shard gets ``length // num_shards`` rows and the first
    ``length % num_shards`` shards one more.

    >>> shard_offsets(13, 5)
    [0, 3, 6, 9, 11, 13]
    """
    base, extra = divmod(length, num_shards)
    offsets = [0]
    for i in range(num_shards):
        offsets.append(offsets[-1] + base + (1 if i < extra else 0))
    return offsets
