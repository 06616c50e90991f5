"""``RaggedTensor.to_tensor``: rows padded into a dense tensor, as one differentiable gather.

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

__all__ = ["to_tensor"]


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
