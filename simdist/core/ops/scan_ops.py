"""Cumulative sums and products along an axis (``tf.math.cumsum``, ``tf.math.cumprod``).

``exclusive`` shifts the scan by one (the first element is the identity, 0 or 1);
``reverse`` scans from the end. Sums add in index order along the axis (NumPy's ``cumsum``
is sequential), so results are deterministic. Gradients: the gradient of a cumsum is the
cumsum of the upstream gradient in the opposite direction (same ``exclusive``); a cumprod's
is TF's rule, ``reverse_cumsum(g * y) / x`` (it divides by ``x``, so a zero input gives
NaN or inf there, as in TF).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["cumsum", "cumprod"]


def _scan_input(x, axis, op: str) -> tuple[Tensor, int]:
    x = convert_to_tensor(x)
    if x._dtype.is_bool or x._dtype == dtypes.string:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values "
            f"[Op:{op}]; cast the input to a number type with tf.cast first."
        )
    if isinstance(axis, float):
        raise TypeError(f"Cannot convert {axis!r} to EagerTensor of dtype int32")
    axis_t = convert_to_tensor(axis)
    if not axis_t._dtype.is_integer or axis_t._value.ndim != 0:
        raise errors.InvalidArgumentError(
            f"ScanOp: axis must be a scalar integer, got {axis!r} [Op:{op}]."
        )
    ndim = x._value.ndim
    ax = int(axis_t._value)
    if not -ndim <= ax < ndim:
        raise errors.InvalidArgumentError(
            f"ScanOp: Expected scan axis in the range [{-ndim}, {ndim}), but got {ax} [Op:{op}]."
        )
    return x, ax % ndim


def _scan(values: np.ndarray, axis: int, exclusive: bool, reverse: bool, ufunc) -> np.ndarray:
    """The inclusive or exclusive, forward or reverse scan of ``values`` along ``axis``."""
    if reverse:
        values = np.flip(values, axis)
    out = ufunc.accumulate(values, axis=axis, dtype=values.dtype)
    if exclusive and out.shape[axis]:
        identity = np.full_like(np.take(out, [0], axis=axis), ufunc.identity)
        out = np.concatenate([identity, np.take(out, np.arange(out.shape[axis] - 1), axis)], axis)
    if reverse:
        out = np.flip(out, axis)
    return np.ascontiguousarray(out)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """The running sum of ``x`` along ``axis``.

    >>> import simdist as tf
    >>> tf.cumsum([1, 2, 3]).numpy()
    array([1, 3, 6], dtype=int32)
    >>> tf.cumsum([1., 2., 3.], exclusive=True, reverse=True).numpy()
    array([5., 3., 0.], dtype=float32)

    Raises:
        InvalidArgumentError: ``axis`` is outside ``[-rank, rank)`` (a scalar has no axis),
            or ``x`` is bool or string.
    """
    x, ax = _scan_input(x, axis, "Cumsum")
    with np.errstate(over="ignore"):
        out = make_tensor(_scan(x._value, ax, exclusive, reverse, np.add), x._dtype)

    def grad(g):
        return _scan(g, ax, exclusive, not reverse, np.add)

    record("Cumsum", [x], [out], [grad])
    return out


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None) -> Tensor:
    """The running product of ``x`` along ``axis`` (``exclusive``/``reverse`` as ``cumsum``).

    >>> import simdist as tf
    >>> tf.math.cumprod([1., 2., 3.], exclusive=True).numpy()
    array([1., 1., 2.], dtype=float32)

    Raises:
        InvalidArgumentError: as ``cumsum``.
    """
    x, ax = _scan_input(x, axis, "Cumprod")
    xv = x._value
    with np.errstate(over="ignore"):
        out = make_tensor(_scan(xv, ax, exclusive, reverse, np.multiply), x._dtype)
    yv = out._value

    def grad(g):
        with np.errstate(divide="ignore", invalid="ignore"):
            return _scan(g * yv, ax, exclusive, not reverse, np.add) / xv

    record("Cumprod", [x], [out], [grad])
    return out
