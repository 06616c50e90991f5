"""Tensors made from a shape or a rule: ``zeros``, ``ones``, ``fill``, ``range``, ``one_hot``."""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["zeros", "ones", "fill", "zeros_like", "ones_like", "range", "one_hot"]

# TF's range picks the widest dtype among its arguments in this order.
_RANGE_ORDER = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _dims(shape, error: type[Exception] = TypeError) -> tuple[int, ...]:
    """``shape`` as a tuple of ints; a non-integer size raises ``error`` (TF's class per op)."""
    if isinstance(shape, Tensor) or hasattr(shape, "_to_tensor"):
        arr = convert_to_tensor(shape)._value
    elif isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        arr = np.asarray([shape])
    else:
        try:
            items = [
                convert_to_tensor(d)._value if hasattr(d, "_to_tensor") else d for d in list(shape)
            ]
            arr = np.asarray(items) if items else np.zeros(0, np.int64)
            if any(isinstance(d, (bool, np.bool_)) for d in items):
                arr = arr.astype(bool)
        except (TypeError, ValueError):
            arr = np.asarray([None], dtype=object)
    if arr.size and arr.dtype.kind not in "iu":
        raise error(
            f"Cannot use {shape!r} as a shape: every dimension size must be an integer (got "
            f"dtype {arr.dtype}); pass a list of ints such as [2, 3], or an int tensor."
        )
    if arr.ndim > 1:
        raise errors.InvalidArgumentError(
            f"dims must be a vector of sizes, got {shape!r} of shape {list(arr.shape)}; pass a "
            "flat list of ints such as [2, 3]."
        )
    dims = tuple(int(d) for d in arr.reshape(-1))
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(f"Dimension sizes must be non-negative, got {dims}.")
    return dims


def zeros(shape, dtype=dtypes.float32, name=None) -> Tensor:
    """A tensor of ``shape`` filled with zeros."""
    dtype = dtypes.as_dtype(dtype)
    return make_tensor(np.zeros(_dims(shape), dtype._np), dtype)


def ones(shape, dtype=dtypes.float32, name=None) -> Tensor:
    """A tensor of ``shape`` filled with ones."""
    dtype = dtypes.as_dtype(dtype)
    return make_tensor(np.ones(_dims(shape), dtype._np), dtype)


def fill(dims, value, name=None) -> Tensor:
    """A tensor of shape ``dims`` filled with the scalar ``value`` (its dtype)."""
    v = convert_to_tensor(value)
    if v._value.ndim != 0:
        raise errors.InvalidArgumentError(
            f"value must be a scalar, got shape {list(v._value.shape)} [Op:Fill]."
        )
    return make_tensor(np.full(_dims(dims, errors.InvalidArgumentError), v._value), v._dtype)


def zeros_like(input, dtype=None, name=None) -> Tensor:
    """Zeros with the shape (and, unless ``dtype``, the dtype) of ``input``."""
    x = convert_to_tensor(input)
    dtype = x._dtype if dtype is None else dtypes.as_dtype(dtype)
    return make_tensor(np.zeros(x._value.shape, dtype._np), dtype)


def ones_like(input, dtype=None, name=None) -> Tensor:
    """Ones with the shape (and, unless ``dtype``, the dtype) of ``input``."""
    x = convert_to_tensor(input)
    dtype = x._dtype if dtype is None else dtypes.as_dtype(dtype)
    return make_tensor(np.ones(x._value.shape, dtype._np), dtype)


def range(start, limit=None, delta=1, dtype=None, name="range") -> Tensor:
    """``[start, start + delta, ...]`` up to (excluding) ``limit``; ``range(n)`` is ``0..n-1``.

    Without ``dtype``: the widest of the arguments' dtypes (Python ints int32, floats
    float32).

    Raises:
        InvalidArgumentError: ``delta`` is 0, or points away from ``limit``.
    """
    if limit is None:
        start, limit = 0, start
    args = [convert_to_tensor(v) for v in (start, limit, delta)]
    if dtype is None:
        for a in args:
            if a._dtype not in _RANGE_ORDER:
                raise TypeError(f"range arguments must be numbers, got a {a._dtype.name} tensor.")
        dtype = max((a._dtype for a in args), key=_RANGE_ORDER.index)
    dtype = dtypes.as_dtype(dtype)
    s, lim, d = (a._value.item() for a in args)
    if d == 0:
        raise errors.InvalidArgumentError("Requires delta != 0: 0 [Op:Range].")
    if (d > 0 and s > lim) or (d < 0 and s < lim):
        relation = "<=" if d > 0 else ">="
        raise errors.InvalidArgumentError(
            f"Requires start {relation} limit when delta {'>' if d > 0 else '<'} 0: "
            f"{s}/{lim} [Op:Range]."
        )
    if dtype.is_integer:
        values = np.arange(int(s), int(lim), int(d), dtype=dtype._np)
    else:
        values = np.arange(s, lim, d, dtype=np.float64).astype(dtype._np)
    return make_tensor(values, dtype)


def one_hot(
    indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None
) -> Tensor:
    """One-hot vectors of length ``depth`` for integer ``indices``, on a new ``axis``.

    Indices outside ``[0, depth)`` give all-``off_value`` vectors, as in TF. The dtype is
    ``dtype``, else that of ``on_value``/``off_value``, else float32.
    """
    idx = convert_to_tensor(indices)
    if idx._value.size == 0 and not idx._dtype.is_integer:  # [] reads as float32
        idx = make_tensor(idx._value.astype(np.int64), dtypes.int64)
    if not idx._dtype.is_integer:
        raise TypeError(f"one_hot indices must be integers, got {idx._dtype.name}.")
    raw_depth = getattr(depth, "_value", depth)
    if isinstance(raw_depth, (bool, np.bool_)) or np.asarray(raw_depth).dtype.kind not in "iu":
        raise TypeError(f"one_hot depth must be an int, got {depth!r}.")
    depth = int(raw_depth)
    if depth < 0:
        raise errors.InvalidArgumentError(f"depth must be non-negative, got {depth}.")
    if dtype is None:
        given = [v for v in (on_value, off_value) if v is not None]
        dtype = convert_to_tensor(given[0])._dtype if given else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype)._value
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype)._value
    hot = idx._value[..., None] == np.arange(depth)
    values = np.where(hot, on, off).astype(dtype._np)
    ndim = values.ndim
    ax = -1 if axis is None else int(axis)
    if not -1 <= ax < ndim:
        raise errors.InvalidArgumentError(
            f"Expected axis to be -1 or between [0, {ndim}), but got {ax} [Op:OneHot]."
        )
    if ax != -1:
        values = np.moveaxis(values, -1, ax)
    return make_tensor(np.ascontiguousarray(values), dtype)
