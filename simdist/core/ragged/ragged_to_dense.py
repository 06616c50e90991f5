"""Dense to ragged and back: ``to_tensor`` (rows padded) and ``from_tensor`` (rows cut), each
one differentiable gather.

The dense result is ``gather(concat([values, [default]]), index)`` where ``index`` names, for
each cell of the bounding (or requested) shape, the value that lands there, or the extra
default row: so the gradient of each value is the sum of its cell's gradient, and the default
value takes the rest. A nested ragged tensor densifies its values first, then its rows.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, join_ops, slicing_ops
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["to_tensor", "from_tensor"]


def _target_shape(shape, rank: int) -> list:
    if shape is None:
        return [None] * rank
    dims = (
        shape.as_list()
        if hasattr(shape, "as_list")
        else list(np.asarray(getattr(shape, "_value", shape)).tolist())
    )
    dims = [None if d is None or d == -1 else int(d) for d in dims]
    if len(dims) != rank:
        raise ValueError(
            f"shape {dims} does not have the ragged tensor's rank {rank}; give one size per "
            "dimension (None for the bounding size)."
        )
    return dims


def to_tensor(rt, default_value=None, shape=None) -> Tensor:
    """The dense form of ``rt`` (see ``RaggedTensor.to_tensor``)."""
    dims = _target_shape(shape, rt.shape.rank)
    inner = rt.values
    if hasattr(inner, "row_splits"):  # nested: densify the values to [nvals, width, ...]
        inner = to_tensor(inner, default_value, [None, *dims[2:]])
    elif any(d is not None for d in dims[2:]):
        for axis, (want, have) in enumerate(zip(dims[2:], inner._value.shape[1:], strict=True)):
            if want is not None and want != have:
                raise errors.InvalidArgumentError(
                    f"to_tensor: the values' dimension {axis + 2} is {have}, shape asks for "
                    f"{want}; only ragged dimensions can be padded or cut."
                )
    item_shape = tuple(inner._value.shape[1:])
    if default_value is None:
        if inner.dtype == dtypes.string:
            default = make_tensor(np.full(item_shape, b"", dtype=object), dtypes.string)
        else:
            default = make_tensor(np.zeros(item_shape, inner.dtype.as_numpy_dtype))
    else:
        default = convert_to_tensor(default_value, dtype=inner.dtype)
        if default.ndim > len(item_shape):
            raise errors.InvalidArgumentError(
                f"default_value of shape {list(default.shape)} must broadcast to each item's "
                f"shape {list(item_shape)}."
            )
        default = array_ops.broadcast_to(default, item_shape) if item_shape else default
    splits = rt.row_splits._value
    lengths = np.diff(splits)
    nrows = dims[0] if dims[0] is not None else lengths.size
    width = dims[1] if dims[1] is not None else (int(lengths.max()) if lengths.size else 0)
    nvals = int(inner._value.shape[0])
    index = np.full((nrows, width), nvals, np.int64)
    for row in range(min(nrows, lengths.size)):
        count = min(int(lengths[row]), width)
        index[row, :count] = splits[row] + np.arange(count)
    table = join_ops.concat([inner, array_ops.expand_dims(default, 0)], axis=0)
    return slicing_ops.gather(table, make_tensor(index))


def from_tensor(tensor, lengths=None, padding=None, ragged_rank: int = 1):
    """The rows of a dense ``tensor`` (see ``RaggedTensor.from_tensor``): one gather of the
    kept items, so the gradient reaches the dense input.

    Raises:
        ValueError: both ``lengths`` and ``padding``; a rank below 2; ``ragged_rank``
            other than 1 to ``rank - 1``.
    """
    from simdist.core.ragged.ragged_tensor import RaggedTensor

    tensor = convert_to_tensor(tensor)
    rank = tensor.ndim
    if lengths is not None and padding is not None:
        raise ValueError("Specify argument `lengths` or `padding`, but not both.")
    if rank < 2:
        raise ValueError(f"Input tensor must have rank >= 2, got shape {tensor.shape}.")
    if not 1 <= ragged_rank < rank:
        raise ValueError(f"ragged_rank must be in [1, {rank - 1}], got {ragged_rank}.")
    if ragged_rank > 1:
        inner = from_tensor(
            array_ops.reshape(tensor, [-1, *tensor._value.shape[2:]]),
            ragged_rank=ragged_rank - 1,
        )
        width = tensor._value.shape[1]
        splits = np.arange(tensor._value.shape[0] + 1, dtype=np.int64) * width
        return RaggedTensor(inner, make_tensor(splits), internal=True)
    nrows, width = tensor._value.shape[:2]
    if padding is not None:
        pad = convert_to_tensor(padding, dtype=tensor.dtype)._value
        is_pad = tensor._value == pad
        is_pad = is_pad.reshape(nrows, width, -1).all(axis=2)
        keep = width - np.argmin(is_pad[:, ::-1], axis=1)
        keep[is_pad.all(axis=1)] = 0
        lengths = keep
    if lengths is None:
        lengths = np.full(nrows, width, np.int64)
    lengths = np.minimum(
        np.asarray(getattr(lengths, "_value", lengths), np.int64).reshape(-1), width
    )
    index = np.concatenate([i * width + np.arange(n) for i, n in enumerate(lengths)] or [[]])
    flat = array_ops.reshape(tensor, [nrows * width, *tensor._value.shape[2:]])
    values = slicing_ops.gather(flat, make_tensor(index.astype(np.int64)))
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)
