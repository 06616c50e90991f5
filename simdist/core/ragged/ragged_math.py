"""Reductions, ``concat`` and ``stack`` of ragged tensors (what ``tf.reduce_sum(rt, axis)``,
``tf.concat([rt, ...])`` and ``tf.ragged.stack`` dispatch to).

Reducing the ragged axis 1 of a ragged-rank-1 tensor is a segment reduction of ``values`` by
row (``unsorted_segment_*``, differentiable): an empty row gives 0 for a sum, NaN for a mean
(0/0) and the dtype's lowest value for a max, as TF. Axis 0 segments by position within the
row; ``axis=None`` reduces ``flat_values``; a dense inner axis maps over ``values``.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, join_ops, math_ops, reduction_ops, segment_ops
from simdist.core.ragged.ragged_tensor import RaggedTensor, is_ragged
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["reduce", "concat", "stack"]

_SEGMENT = {
    "sum": segment_ops.unsorted_segment_sum,
    "max": segment_ops.unsorted_segment_max,
    "min": segment_ops.unsorted_segment_min,
    "mean": segment_ops.unsorted_segment_sum,  # then divided by the counts
}
_DENSE = {
    "sum": reduction_ops.reduce_sum,
    "max": reduction_ops.reduce_max,
    "min": reduction_ops.reduce_min,
    "mean": reduction_ops.reduce_mean,
    "prod": reduction_ops.reduce_prod,
    "any": reduction_ops.reduce_any,
    "all": reduction_ops.reduce_all,
}


def reduce(kind: str, rt: RaggedTensor, axis, keepdims: bool = False):
    """``tf.reduce_<kind>(rt, axis)`` for a ragged ``rt``.

    Raises:
        UnimplementedError: an axis simdist does not reduce on ragged tensors (axis 0 or 1
            of a ragged rank above 1), or ``keepdims`` with a ragged result.
        InvalidArgumentError: an axis out of range.
    """
    rank = rt.shape.rank
    if axis is None:
        total = _DENSE[kind](rt.flat_values)
        return array_ops.reshape(total, [1] * rank) if keepdims else total
    axes = np.asarray(getattr(axis, "_value", axis)).reshape(-1).tolist()
    axes = sorted({a % rank if -rank <= a < rank else _bad_axis(a, rank) for a in axes})
    result = rt
    for removed, ax in enumerate(axes):
        result = _reduce_axis(kind, result, ax - removed)
    if keepdims:
        if is_ragged(result):
            raise errors.UnimplementedError(
                "simdist keeps the reduced dimensions (keepdims) only when the result is "
                "dense; reduce, then add the dimension (docs/differences.md)."
            )
        for ax in axes:
            result = array_ops.expand_dims(result, ax)
    return result


def _bad_axis(axis: int, rank: int):
    raise errors.InvalidArgumentError(
        f"Invalid reduction dimension {axis} for a ragged tensor of rank {rank}; use an axis "
        f"in [{-rank}, {rank})."
    )


def _reduce_axis(kind: str, rt, axis: int):
    if not is_ragged(rt):
        return _DENSE[kind](rt, axis=axis)
    if axis >= 2:
        return rt.with_values(_reduce_axis(kind, rt.values, axis - 1))
    if is_ragged(rt.values) or _SEGMENT.get(kind) is None:
        raise errors.UnimplementedError(
            f"simdist reduces axis {axis} of ragged tensors of ragged rank 1 only (this one "
            f"has ragged rank {rt.ragged_rank}) with sum, mean, max or min "
            "(docs/differences.md)."
        )
    splits = rt.row_splits._value
    lengths = np.diff(splits)
    if axis == 1:
        ids, num = np.repeat(np.arange(lengths.size), lengths), lengths.size
    else:
        ids = np.concatenate([np.arange(n) for n in lengths] or [np.zeros(0, int)])
        num = int(lengths.max()) if lengths.size else 0
    ids_t = make_tensor(ids.astype(np.int64))
    values = rt.values
    total = _SEGMENT[kind](values, ids_t, num)
    if kind != "mean":
        return total
    counts = np.bincount(ids, minlength=num).astype(values.dtype.as_numpy_dtype)
    counts = counts.reshape((num,) + (1,) * (values.ndim - 1))
    return math_ops.divide(total, make_tensor(counts))


def _as_ragged(value, ragged_rank: int = 1) -> RaggedTensor:
    if is_ragged(value):
        return value
    tensor = convert_to_tensor(value)
    return RaggedTensor.from_tensor(tensor, ragged_rank=min(ragged_rank, tensor.ndim - 1))


def concat(values, axis: int):
    """``tf.concat`` of a list holding ragged tensors, on axis 0 (rows) or 1 (row by row).

    Raises:
        InvalidArgumentError: ragged ranks or dtypes differ; on axis 1, row counts differ.
        UnimplementedError: another axis.
    """
    parts = [_as_ragged(v) for v in values]
    rank = parts[0].shape.rank
    axis = int(getattr(axis, "_value", axis))
    axis = axis % rank if -rank <= axis < rank else _bad_axis(axis, rank)
    ragged_ranks = {p.ragged_rank for p in parts}
    if len(ragged_ranks) != 1:
        raise errors.InvalidArgumentError(
            f"tf.concat of ragged tensors needs one ragged rank, got {sorted(ragged_ranks)}."
        )
    if axis == 0:
        return _concat_rows(parts)
    if axis == 1 and not is_ragged(parts[0].values):
        rows = {p._nrows() for p in parts}
        if len(rows) != 1:
            raise errors.InvalidArgumentError(
                f"Input tensors at index 0 (=x) and 1 (=y) must have the same number of rows "
                f"to be concatenated along axis 1; got {[p._nrows() for p in parts]}."
            )
        offsets = np.cumsum([0] + [int(p.values._value.shape[0]) for p in parts])
        index, lengths = [], []
        for row in range(rows.pop()):
            length = 0
            for offset, p in zip(offsets, parts, strict=False):
                s = p.row_splits._value
                index.append(offset + np.arange(s[row], s[row + 1]))
                length += int(s[row + 1] - s[row])
            lengths.append(length)
        joined = join_ops.concat([p.values for p in parts], axis=0)
        from simdist.core.ops import slicing_ops

        flat_index = np.concatenate(index or [np.zeros(0, int)]).astype(np.int64)
        values = slicing_ops.gather(joined, make_tensor(flat_index))
        return RaggedTensor.from_row_lengths(values, lengths, validate=False)
    raise errors.UnimplementedError(
        f"simdist concatenates ragged tensors on axis 0, or axis 1 of ragged rank 1, not axis "
        f"{axis} (docs/differences.md)."
    )


def _concat_rows(parts: list) -> RaggedTensor:
    if is_ragged(parts[0].values):
        values = _concat_rows([p.values for p in parts])
    else:
        values = join_ops.concat([p.values for p in parts], axis=0)
    lengths = np.concatenate([np.diff(p.row_splits._value) for p in parts])
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


def stack(values, axis: int = 0, name=None) -> RaggedTensor:
    """``tf.ragged.stack``: inputs (ragged or dense) as the rows of a new outer dimension.

    Raises:
        UnimplementedError: an axis other than 0.
    """
    if int(axis) != 0:
        raise errors.UnimplementedError(
            "simdist's tf.ragged.stack stacks on axis 0 only (docs/differences.md)."
        )
    items = list(values)
    if all(not is_ragged(v) and convert_to_tensor(v).ndim == 1 for v in items):
        tensors = [convert_to_tensor(v) for v in items]
        lengths = [int(t._value.shape[0]) for t in tensors]
        return RaggedTensor.from_row_lengths(join_ops.concat(tensors, axis=0), lengths)
    parts = [_as_ragged(v) for v in items]
    joined = _concat_rows(parts)
    return RaggedTensor.from_row_lengths(joined, [p._nrows() for p in parts], validate=False)


def is_any_ragged(values) -> bool:
    return not isinstance(values, Tensor) and any(is_ragged(v) for v in values)
