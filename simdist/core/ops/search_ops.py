"""Sorted search and distinct values: ``searchsorted``, ``unique``, ``unique_with_counts``.

``searchsorted`` searches each row of ``values`` in the matching row of the sorted
``sorted_sequence`` (their leading dimensions must agree); ``"left"`` gives the first index
whose element is ``>=`` the value (TF's LowerBound), ``"right"`` the first ``>`` (UpperBound).
A NaN value goes first (``"left"``) or last (``"right"``), as TF's comparisons put it.
``unique`` keeps first occurrences in order of appearance, as TF does (not sorted); each NaN
is a value of its own, and ``0.0`` and ``-0.0`` are one. None of
these ops has a gradient (their outputs are indices), as in TF.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, check_same_dtype, make_tensor

__all__ = ["searchsorted", "unique", "unique_with_counts", "Unique", "UniqueWithCounts"]


class Unique(NamedTuple):
    """What ``tf.unique`` returns."""

    y: Tensor
    idx: Tensor


class UniqueWithCounts(NamedTuple):
    """What ``tf.unique_with_counts`` returns."""

    y: Tensor
    idx: Tensor
    count: Tensor


def _index_dtype(out_type, op: str) -> dtypes.DType:
    dtype = dtypes.as_dtype(out_type)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise errors.InvalidArgumentError(
            f"Value for attr 'out_type' of {dtype.name} is not in the list of allowed values: "
            f"int32, int64 [Op:{op}]."
        )
    return dtype


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None) -> Tensor:
    """Where each of ``values`` would go in ``sorted_sequence`` to keep it sorted.

    >>> import simdist as tf
    >>> tf.searchsorted([1, 3, 5], [2, 5, 6], side="right").numpy()
    array([1, 3, 3], dtype=int32)

    Raises:
        ValueError: ``side`` is neither ``"left"`` nor ``"right"``.
        InvalidArgumentError: a scalar input, leading dimensions that differ, or inputs of
            different dtypes.
    """
    if side not in ("left", "right"):
        raise ValueError(
            f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'."
        )
    op = "LowerBound" if side == "left" else "UpperBound"
    seq, vals = convert_to_tensor(sorted_sequence), convert_to_tensor(values)
    check_same_dtype(op, seq, vals)
    dtype = _index_dtype(out_type, op)
    sv, vv = seq._value, vals._value
    if sv.ndim == 0 or vv.ndim == 0:
        raise errors.InvalidArgumentError(
            f"sorted_sequence and values must be at least 1-D, got shapes {list(sv.shape)} and "
            f"{list(vv.shape)} [Op:{op}]."
        )
    if sv.shape[:-1] != vv.shape[:-1]:
        raise errors.InvalidArgumentError(
            f"Leading dim_size of both tensors must match. [Op:{op}] (sorted_sequence "
            f"{list(sv.shape)}, values {list(vv.shape)})"
        )
    leading = int(np.prod(sv.shape[:-1]))
    rows_s = sv.reshape(leading, sv.shape[-1])
    rows_v = vv.reshape(leading, vv.shape[-1])
    found = np.empty(rows_v.shape, np.int64)
    for r in range(rows_v.shape[0]):
        found[r] = np.searchsorted(rows_s[r], rows_v[r], side=side)
    if vv.dtype.kind == "f":  # TF's binary search: every comparison with NaN is false
        found[np.isnan(rows_v)] = 0 if side == "left" else rows_s.shape[-1]
    return make_tensor(found.reshape(vv.shape), dtype)


def _unique(x, out_idx, op: str) -> tuple[Tensor, Tensor, np.ndarray]:
    t = convert_to_tensor(x)
    dtype = _index_dtype(out_idx, op)
    tv = t._value
    if tv.ndim != 1:
        raise errors.InvalidArgumentError(
            f"unique expects a 1D vector. [Op:{op}] (got shape {list(tv.shape)})"
        )
    first: dict = {}
    idx = np.empty(tv.shape[0], np.int64)
    for i, v in enumerate(tv.tolist()):
        key = v if v == v else ("nan", i)  # NaN never equals itself: each NaN is its own value
        idx[i] = first.setdefault(key, len(first))
    order = np.zeros(len(first), np.int64)
    order[idx[::-1]] = np.arange(tv.shape[0])[::-1]  # the first position of each value
    y = make_tensor(tv[order], t._dtype)
    counts = np.bincount(idx, minlength=len(first))
    return y, make_tensor(idx, dtype), counts


def unique(x, out_idx=dtypes.int32, name=None) -> Unique:
    """The distinct values of 1-D ``x`` in order of first appearance, and for each element
    of ``x`` the index of its value in ``y``.

    >>> import simdist as tf
    >>> y, idx = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    >>> y.numpy(), idx.numpy()
    (array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))

    Raises:
        InvalidArgumentError: ``x`` is not 1-D.
    """
    y, idx, _ = _unique(x, out_idx, "Unique")
    return Unique(y, idx)


def unique_with_counts(x, out_idx=dtypes.int32, name=None) -> UniqueWithCounts:
    """``unique``, and how many times each distinct value occurs (``out_idx`` dtype)."""
    y, idx, counts = _unique(x, out_idx, "UniqueWithCounts")
    return UniqueWithCounts(y, idx, make_tensor(counts, idx._dtype))
