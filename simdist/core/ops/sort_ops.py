"""Sorting along an axis: ``sort``, ``argsort`` and ``top_k``, with gradients of the values.

Order of ties, made definite: ``argsort`` and ``top_k`` use a stable sort, so equal values
keep their index order (``top_k`` of ``[1, 3, 3, 2]`` with ``k=2`` picks indices 1, 2, as TF
does). A descending sort is stable too: equal values keep their original order, not the
reverse. NaN sorts above every number (NumPy's order; TF's own order for NaN is its
kernel's), so a descending sort or ``top_k`` puts NaN first.

The gradient of the sorted values (and of ``top_k``'s values) scatters the incoming
gradient back to the positions the values came from; indices get none.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import normalize_axis
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["sort", "argsort", "top_k", "TopKV2"]


class TopKV2(NamedTuple):
    """What ``top_k`` returns (TF's named tuple of the same name)."""

    values: Tensor
    indices: Tensor


def _sortable(x: Tensor, op: str) -> None:
    if x._dtype == dtypes.string or x._dtype.is_bool:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values "
            f"[Op:{op}]; {op} sorts numbers only (cast booleans with tf.cast)."
        )


def _order(value: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable indices that sort ``value`` along ``axis`` (descending keeps ties in order)."""
    if not descending:
        return np.argsort(value, axis=axis, kind="stable")
    # Reversing a stable ascending sort of the reversed array: ties stay in index order.
    flipped = np.flip(value, axis=axis)
    order = np.argsort(flipped, axis=axis, kind="stable")
    return np.flip(value.shape[axis] - 1 - order, axis=axis)


def _direction(direction: str) -> bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(
            "Argument `direction` should be one of ASCENDING, DESCENDING. Received: "
            f"direction={direction}"
        )
    return direction == "DESCENDING"


def _axis(x: Tensor, axis, op: str) -> int:
    if x._value.ndim == 0:
        raise errors.InvalidArgumentError(
            f"input must be >= 1-D, got shape [] [Op:{op}]; sort a vector or higher."
        )
    return normalize_axis(axis, x._value.ndim, op)


def _values_along(x: Tensor, order: np.ndarray, axis: int, op: str) -> Tensor:
    """``x`` taken along ``axis`` at ``order``, with the gradient scattered back."""
    xv = x._value
    out = make_tensor(np.take_along_axis(xv, order, axis=axis), x._dtype)

    def grad(g):
        dx = np.zeros(xv.shape, g.dtype)
        np.put_along_axis(dx, order, g, axis=axis)
        return dx

    record(op, [x], [out], [grad])
    return out


def sort(values, axis=-1, direction="ASCENDING", name=None) -> Tensor:
    """``values`` sorted along ``axis`` (``tf.sort``).

    >>> import simdist as tf
    >>> tf.sort([3, 1, 2], direction="DESCENDING").numpy()
    array([3, 2, 1], dtype=int32)

    Raises:
        ValueError: a ``direction`` other than ASCENDING or DESCENDING.
        InvalidArgumentError: a scalar, an axis out of range, or a string/bool tensor.
    """
    descending = _direction(direction)
    x = convert_to_tensor(values)
    _sortable(x, "Sort")
    axis = _axis(x, axis, "Sort")
    return _values_along(x, _order(x._value, axis, descending), axis, "Sort")


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None) -> Tensor:
    """The int32 indices that sort ``values`` along ``axis`` (``tf.argsort``).

    Always stable (ties in index order), whatever ``stable`` says.

    Raises:
        ValueError: a ``direction`` other than ASCENDING or DESCENDING.
        InvalidArgumentError: a scalar, an axis out of range, or a string/bool tensor.
    """
    descending = _direction(direction)
    x = convert_to_tensor(values)
    _sortable(x, "ArgSort")
    axis = _axis(x, axis, "ArgSort")
    order = _order(x._value, axis, descending)
    return make_tensor(order.astype(np.int32), dtypes.int32)


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None) -> TopKV2:
    """The ``k`` largest entries of the last axis and their indices (``tf.math.top_k``).

    >>> import simdist as tf
    >>> tf.math.top_k([1, 3, 3, 2], k=2).indices.numpy()
    array([1, 2], dtype=int32)

    Args:
        input: a tensor of rank >= 1.
        k: how many entries to keep (``0 <= k <= input.shape[-1]``).
        sorted: ignored; the result is always sorted, largest first.
        index_type: int32 or int64, the dtype of ``indices``.

    Returns:
        ``TopKV2(values, indices)``, each of shape ``input.shape[:-1] + [k]``.

    Raises:
        InvalidArgumentError: a negative ``k``, ``k`` beyond the last dimension, or a scalar.
    """
    x = convert_to_tensor(input)
    _sortable(x, "TopKV2")
    xv = x._value
    if xv.ndim == 0:
        raise errors.InvalidArgumentError(
            "input must be >= 1-D, got shape [] [Op:TopKV2]; top_k picks along the last axis."
        )
    k = int(convert_to_tensor(k)._value) if not isinstance(k, int) else k
    if k < 0:
        raise errors.InvalidArgumentError(f"Need k >= 0, got {k} [Op:TopKV2].")
    if k > xv.shape[-1]:
        raise errors.InvalidArgumentError(
            f"input must have at least k columns. Had {xv.shape[-1]}, needed {k} "
            "[Op:TopKV2]; pick k <= the size of the last axis."
        )
    order = _order(xv, xv.ndim - 1, descending=True)[..., :k]
    index_dtype = dtypes.as_dtype(index_type)
    indices = make_tensor(order.astype(index_dtype.as_numpy_dtype), index_dtype)
    return TopKV2(_values_along(x, order, xv.ndim - 1, "TopKV2"), indices)
