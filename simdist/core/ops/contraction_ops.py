"""``tf.tensordot``: a sum of products over paired axes, as one transpose, reshape and matmul.

As TF builds it: the free axes of ``a`` then its contracted axes (in the order given), the
contracted axes of ``b`` then its free ones, each flattened to a matrix; one ``matmul``; the
result reshaped to ``a``'s free shape + ``b``'s free shape. Built from simdist's own
``transpose``, ``reshape`` and ``matmul``, so its gradient is theirs.
"""

from __future__ import annotations

import numbers

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops.array_ops import reshape, transpose
from simdist.core.ops.math_ops import matmul
from simdist.core.tensor import Tensor

__all__ = ["tensordot"]


def _axis_lists(axes, a_rank: int, b_rank: int) -> tuple[list[int], list[int]]:
    """``axes`` as TF reads it: an int N (the last N axes of a with the first N of b), or a
    pair of axis lists (or of single axes); negative axes count from the end."""
    value = axes._value.tolist() if hasattr(axes, "_value") else axes
    if isinstance(value, numbers.Integral):
        n = int(value)
        if not 0 <= n <= min(a_rank, b_rank):
            raise errors.InvalidArgumentError(
                f"tensordot: axes={n} must be in [0, {min(a_rank, b_rank)}] (the smaller rank)."
            )
        return list(range(a_rank - n, a_rank)), list(range(n))
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise errors.InvalidArgumentError(
            f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}."
        )
    a_axes, b_axes = ([x] if isinstance(x, numbers.Integral) else list(x) for x in value)
    if len(a_axes) != len(b_axes):
        raise errors.InvalidArgumentError(
            f"tensordot: the two axis lists must have the same length, got {a_axes} and {b_axes}."
        )
    return [int(x) % a_rank for x in a_axes], [int(x) % b_rank for x in b_axes]


def tensordot(a, b, axes, name=None) -> Tensor:
    """``tf.tensordot(a, b, axes)``: contract ``a``'s axes ``axes[0]`` with ``b``'s ``axes[1]``.

    Raises:
        InvalidArgumentError: bad ``axes``, contracted axes of different lengths, or
            different dtypes.
    """
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    a_shape, b_shape = a._value.shape, b._value.shape
    a_axes, b_axes = _axis_lists(axes, len(a_shape), len(b_shape))
    for i, j in zip(a_axes, b_axes, strict=True):
        if a_shape[i] != b_shape[j]:
            raise errors.InvalidArgumentError(
                f"tensordot: axis {i} of a (length {a_shape[i]}) and axis {j} of b (length "
                f"{b_shape[j]}) are contracted and must have the same length."
            )
    a_free = [i for i in range(len(a_shape)) if i not in a_axes]
    b_free = [j for j in range(len(b_shape)) if j not in b_axes]
    inner = int(np.prod([a_shape[i] for i in a_axes], dtype=np.int64))
    a_rows = int(np.prod([a_shape[i] for i in a_free], dtype=np.int64))
    b_cols = int(np.prod([b_shape[j] for j in b_free], dtype=np.int64))
    a2 = reshape(transpose(a, a_free + a_axes), [a_rows, inner])
    b2 = reshape(transpose(b, b_axes + b_free), [inner, b_cols])
    out_shape = [a_shape[i] for i in a_free] + [b_shape[j] for j in b_free]
    return reshape(matmul(a2, b2), out_shape)
