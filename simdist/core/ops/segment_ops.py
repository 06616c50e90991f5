"""Segment reductions: ``segment_sum/mean/max`` and ``unsorted_segment_sum/mean/max``.

``segment_ids`` labels each row of ``data`` (its leading ``rank(segment_ids)`` dims) with
the output row it is reduced into. The sorted ops need ids that never decrease and make
``max(id) + 1`` output rows; the unsorted ops take ``num_segments`` and ids in any order,
and drop rows whose id is negative (as TF does). An output row no id names is 0 for sum
and mean; for max (min) it is 0 in the sorted op and the dtype's lowest (highest) value in
the unsorted one, TF's two conventions. Means of integers: the sorted op divides in the
integer dtype, truncating (TF's kernel); the unsorted one is TF's ``sum / count``, a true
division, so int32 data gives a float64 mean.

Sums add the rows of a segment in row order (``np.add.at`` is sequential), so results are
deterministic. Gradients: a sum sends each output row's gradient to every row of its
segment; a mean divides it by the segment's size; a max sends it to the rows equal to the
maximum (minimum), shared equally among ties (TF's rule for segment max and min).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "segment_sum",
    "segment_mean",
    "segment_max",
    "segment_min",
    "unsorted_segment_sum",
    "unsorted_segment_mean",
    "unsorted_segment_max",
    "unsorted_segment_min",
]


def _ids(segment_ids, op: str) -> np.ndarray:
    ids = convert_to_tensor(segment_ids)
    if not ids._dtype.is_integer:
        raise errors.InvalidArgumentError(
            f"Value for attr 'Tindices' of {ids._dtype.name} is not in the list of allowed "
            f"values: int32, int64 [Op:{op}]; segment_ids must be integers (tf.cast them)."
        )
    return ids._value.astype(np.int64)


def _numeric(x: Tensor, op: str) -> None:
    if x._dtype.is_bool or not (x._dtype.is_floating or x._dtype.is_integer):
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values "
            f"[Op:{op}]; segment reductions take numbers."
        )


def _reduce(x: Tensor, ids: np.ndarray, num: int, kind: str, empty_max, op: str) -> Tensor:
    """Reduce rows of ``x`` (flattened over ``ids``' dims) into ``num`` segments."""
    xv = x._value
    row_shape = xv.shape[ids.ndim :]
    rows = xv.reshape((-1,) + row_shape)
    flat_ids = ids.reshape(-1)
    keep = flat_ids >= 0
    kept_ids, kept_rows = flat_ids[keep], rows[keep]
    counts = np.bincount(kept_ids, minlength=num)[:num]
    counts_b = counts.reshape((num,) + (1,) * len(row_shape))
    if kind in ("max", "min"):
        info = np.finfo(xv.dtype) if xv.dtype.kind == "f" else np.iinfo(xv.dtype)
        start, combine = (info.min, np.maximum) if kind == "max" else (info.max, np.minimum)
        value = np.full((num,) + row_shape, start, xv.dtype)
        combine.at(value, kept_ids, kept_rows)
        value = np.where(counts_b > 0, value, np.asarray(empty_max, xv.dtype))
    else:
        value = np.zeros((num,) + row_shape, xv.dtype)
        np.add.at(value, kept_ids, kept_rows)
        if kind == "mean":
            divisor = np.maximum(counts_b, 1).astype(xv.dtype)
            if xv.dtype.kind in "iu":  # C's integer division: truncation toward zero
                value = (np.sign(value) * (np.abs(value) // divisor)).astype(xv.dtype)
            else:
                value = value / divisor
    out = make_tensor(np.asarray(value, xv.dtype), x._dtype)

    def grad(g):
        if kind == "mean":
            g = g / np.maximum(counts_b, 1)
        if kind in ("max", "min"):
            hits = (kept_rows == value[kept_ids]).astype(g.dtype)
            ties = np.zeros((num,) + row_shape, g.dtype)
            np.add.at(ties, kept_ids, hits)
            picked = g[kept_ids] * hits / np.maximum(ties[kept_ids], 1)
        else:
            picked = g[kept_ids]
        d_rows = np.zeros(rows.shape, g.dtype)
        d_rows[keep] = picked
        return d_rows.reshape(xv.shape)

    record(op, [x], [out], [grad])
    return out


def _sorted(data, segment_ids, kind: str, op: str) -> Tensor:
    x = convert_to_tensor(data)
    _numeric(x, op)
    ids = _ids(segment_ids, op)
    if ids.ndim != 1:
        raise errors.InvalidArgumentError(
            f"segment_ids should be a vector, got shape {list(ids.shape)} [Op:{op}]."
        )
    if x._value.ndim == 0 or ids.shape[0] != x._value.shape[0]:
        raise errors.InvalidArgumentError(
            f"segment_ids should be the same size as dimension 0 of input [Op:{op}]; got "
            f"{ids.shape[0]} ids for data of shape {list(x._value.shape)}."
        )
    if ids.size and np.any(np.diff(ids) < 0):
        raise errors.InvalidArgumentError(
            f"segment ids are not increasing [Op:{op}]; sort data by id, or use "
            f"tf.math.unsorted_{_op_name(op)}."
        )
    if ids.size and ids[0] < 0:
        raise errors.InvalidArgumentError(
            f"Segment id {int(ids[0])} out of range [0, {int(ids[-1]) + 1}), possibly because "
            f"'segment_ids' input is not sorted. [Op:{op}]"
        )
    num = int(ids[-1]) + 1 if ids.size else 0
    return _reduce(x, ids, num, kind, 0, op)


def _op_name(op: str) -> str:
    """``SegmentSum`` -> ``segment_sum`` (for messages)."""
    return "segment_" + op[len("Segment") :].lower()


def _unsorted(data, segment_ids, num_segments, kind: str, op: str) -> Tensor:
    x = convert_to_tensor(data)
    _numeric(x, op)
    ids = _ids(segment_ids, op)
    num = int(convert_to_tensor(num_segments)._value)
    if num < 0:
        raise errors.InvalidArgumentError(f"num_segments must be >= 0, got {num} [Op:{op}].")
    xv = x._value
    if xv.shape[: ids.ndim] != ids.shape:
        raise errors.InvalidArgumentError(
            f"data.shape = {list(xv.shape)} does not start with segment_ids.shape = "
            f"{list(ids.shape)} [Op:{op}]."
        )
    too_big = ids >= num
    if np.any(too_big):
        where = [int(i) for i in np.argwhere(too_big)[0]]
        raise errors.InvalidArgumentError(
            f"segment_ids{where} = {int(ids[tuple(where)])} is out of range [0, {num}) "
            f"[Op:{op}]; raise num_segments or drop the row (a negative id drops it)."
        )
    if kind in ("max", "min"):
        info = np.finfo(xv.dtype) if xv.dtype.kind == "f" else np.iinfo(xv.dtype)
        return _reduce(x, ids, num, kind, info.min if kind == "max" else info.max, op)
    if kind == "mean" and xv.dtype.kind in "iu":
        # TF: unsorted_segment_sum(data) / count, and `/` of integers is a float64 division
        total = _reduce(x, ids, num, "sum", 0, op)
        counts = np.bincount(ids.reshape(-1)[ids.reshape(-1) >= 0], minlength=num)[:num]
        shape = (num,) + (1,) * (xv.ndim - ids.ndim)
        return math_ops.divide(total, np.maximum(counts, 1).reshape(shape).astype(xv.dtype))
    return _reduce(x, ids, num, kind, 0, op)


def segment_sum(data, segment_ids, name=None) -> Tensor:
    """Row sums per segment; ``segment_ids`` sorted (``tf.math.segment_sum``).

    >>> import simdist as tf
    >>> tf.math.segment_sum([1, 2, 3, 4], [0, 0, 1, 1]).numpy()
    array([3, 7], dtype=int32)

    Raises:
        InvalidArgumentError: ids that decrease, are negative, or do not match dim 0.
    """
    return _sorted(data, segment_ids, "sum", "SegmentSum")


def segment_mean(data, segment_ids, name=None) -> Tensor:
    """Row means per segment (0 for an id that names no row); ids sorted."""
    return _sorted(data, segment_ids, "mean", "SegmentMean")


def segment_max(data, segment_ids, name=None) -> Tensor:
    """Row maxima per segment (0 for an id that names no row); ids sorted."""
    return _sorted(data, segment_ids, "max", "SegmentMax")


def segment_min(data, segment_ids, name=None) -> Tensor:
    """Row minima per segment (0 for an id that names no row); ids sorted."""
    return _sorted(data, segment_ids, "min", "SegmentMin")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None) -> Tensor:
    """Row sums into ``num_segments`` segments, ids in any order; negative ids dropped.

    >>> import simdist as tf
    >>> tf.math.unsorted_segment_sum([1, 2, 3], [1, 0, 1], num_segments=2).numpy()
    array([2, 4], dtype=int32)

    Raises:
        InvalidArgumentError: an id ``>= num_segments``, or ids whose shape does not
            start ``data``'s.
    """
    return _unsorted(data, segment_ids, num_segments, "sum", "UnsortedSegmentSum")


def unsorted_segment_mean(data, segment_ids, num_segments, name=None) -> Tensor:
    """Row means into ``num_segments`` segments (0 for an empty one)."""
    return _unsorted(data, segment_ids, num_segments, "mean", "UnsortedSegmentMean")


def unsorted_segment_max(data, segment_ids, num_segments, name=None) -> Tensor:
    """Row maxima into ``num_segments`` segments (the dtype's lowest for an empty one)."""
    return _unsorted(data, segment_ids, num_segments, "max", "UnsortedSegmentMax")


def unsorted_segment_min(data, segment_ids, num_segments, name=None) -> Tensor:
    """Row minima into ``num_segments`` segments (the dtype's highest for an empty one)."""
    return _unsorted(data, segment_ids, num_segments, "min", "UnsortedSegmentMin")
