"""Shard counts of TF's variable partitioners, and where the shards of an axis are cut.

Rules (``tf.distribute.experimental.partitioners`` API pages; the formulas are those of TF's
v1 ``fixed_size_partitioner``, ``min_max_variable_partitioner`` and
``variable_axis_size_partitioner`` that the v2 classes wrap). A partitioner is called as
``partitioner(shape, dtype, axis=0)`` and returns one count per axis: the shard count along
``axis`` and 1 elsewhere. An element's bytes are its dtype's size, or ``bytes_per_string``
for strings. Counts are computed with exact integer arithmetic here.

>>> fixed_shards([10, 3], 2)
[2, 1]
>>> min_size_shards([6, 1], 4, min_shard_bytes=4, max_shards=2)
[2, 1]
>>> max_size_shards([6, 1], 4, max_shard_bytes=4)
[6, 1]
>>> shard_offsets(13, 5)
[0, 3, 6, 9, 11, 13]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

KINDS = ("FixedShards", "MinSize", "MaxSize")


def element_bytes(dtype: str, bytes_per_string: int = 16) -> int:
    """Bytes of one element: ``bytes_per_string`` for ``"string"``, else NumPy's item size.

    >>> element_bytes("float32"), element_bytes("string", 8)
    (4, 8)
    """
    if dtype == "string":
        return int(bytes_per_string)
    return int(np.dtype(dtype).itemsize)


def _check(shape: Sequence[int], axis: int) -> list[int]:
    dims = [int(d) for d in shape]
    if not 0 <= axis < len(dims):
        raise ValueError(f"axis {axis} is not an axis of shape {dims}")
    return dims


def _counts(dims: list[int], axis: int, count: int) -> list[int]:
    result = [1] * len(dims)
    result[axis] = count
    return result


def fixed_shards(shape: Sequence[int], num_shards: int, axis: int = 0) -> list[int]:
    """``FixedShardsPartitioner(num_shards)``: ``min(num_shards, shape[axis])`` shards."""
    dims = _check(shape, axis)
    return _counts(dims, axis, min(int(num_shards), dims[axis]))


def min_size_shards(
    shape: Sequence[int], element_size: int, min_shard_bytes: int, max_shards: int, axis: int = 0
) -> list[int]:
    """``MinSizePartitioner``: as many shards as keep each at least ``min_shard_bytes``.

    The count is ``ceil(total bytes / min_shard_bytes)``, capped by ``max_shards`` and by the
    axis length, and at least 1.
    """
    dims = _check(shape, axis)
    total = int(np.prod(dims, dtype=np.int64)) * int(element_size)
    wanted = -(-total // int(min_shard_bytes))  # ceil, exactly
    return _counts(dims, axis, max(1, min(dims[axis], int(max_shards), wanted)))


def max_size_shards(
    shape: Sequence[int],
    element_size: int,
    max_shard_bytes: int,
    max_shards: int | None = None,
    axis: int = 0,
) -> list[int]:
    """``MaxSizePartitioner``: as few shards as keep each at most ``max_shard_bytes``.

    A shard holds whole slices along ``axis``; it holds ``floor(max_shard_bytes / bytes of
    one slice)`` of them, but at least one (a slice larger than the limit is a shard of its
    own). The count is ``ceil(shape[axis] / slices per shard)``, capped by ``max_shards``
    when given. The axis must not be empty (TF divides by its length).
    """
    dims = _check(shape, axis)
    if dims[axis] < 1:
        raise ValueError(f"MaxSizePartitioner needs a non-empty axis {axis}, got {dims}")
    slice_bytes = int(np.prod(dims, dtype=np.int64)) // dims[axis] * int(element_size)
    per_shard = max(1, int(max_shard_bytes) // slice_bytes) if slice_bytes else dims[axis]
    count = -(-dims[axis] // per_shard)
    if max_shards:
        count = min(int(max_shards), count)
    return _counts(dims, axis, count)


def shard_counts(kind: str, params: dict, shape: Sequence[int], dtype: str) -> list[int]:
    """The counts of partitioner ``kind`` (one of ``KINDS``) built with ``params`` (its
    constructor's keyword arguments), called on ``(shape, dtype)``."""
    size = element_bytes(dtype, params.get("bytes_per_string", 16))
    if kind == "FixedShards":
        return fixed_shards(shape, params["num_shards"])
    if kind == "MinSize":
        return min_size_shards(
            shape, size, params.get("min_shard_bytes", 256 << 10), params.get("max_shards", 1)
        )
    if kind == "MaxSize":
        return max_size_shards(shape, size, params["max_shard_bytes"], params.get("max_shards"))
    raise ValueError(f"unknown partitioner {kind!r}; use one of {KINDS}")


def shard_offsets(length: int, num_shards: int) -> list[int]:
    """Where ``num_shards`` contiguous shards of an axis of ``length`` start, then the end:
    each shard has ``length // num_shards`` rows and the first ``length % num_shards`` one
    more (TF's rule for a ShardedVariable's shard shapes)."""
    if num_shards < 1:
        raise ValueError(f"num_shards must be >= 1, got {num_shards}")
    sizes = [
        length // num_shards + (1 if i < length % num_shards else 0) for i in range(num_shards)
    ]
    return [int(x) for x in np.concatenate([[0], np.cumsum(sizes)])]


def split_rows(value, num_shards: int) -> list[np.ndarray]:
    """``value`` cut into ``num_shards`` row blocks at :func:`shard_offsets`."""
    array = np.asarray(value)
    cuts = shard_offsets(array.shape[0], num_shards)
    return [array[cuts[i] : cuts[i + 1]] for i in range(num_shards)]
