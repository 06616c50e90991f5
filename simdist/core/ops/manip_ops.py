"""Rows picked, repeated or rotated: ``boolean_mask``, ``repeat``, ``roll``, with gradients.

Each op is a gather of whole slices along one axis (``boolean_mask`` keeps the slices whose
mask is true, ``repeat`` takes slice ``i`` ``repeats[i]`` times, ``roll`` rotates them), so
each gradient scatter-adds the upstream gradient back to the slices it came from.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import int_list
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["boolean_mask", "repeat", "roll"]


def _take(x: Tensor, rows: np.ndarray, axis: int, op: str) -> Tensor:
    """Slices ``rows`` of ``x`` along ``axis``; the gradient adds each back where it came from."""
    xv = x._value
    out = make_tensor(np.take(xv, rows, axis=axis), x._dtype)

    def grad(g):
        dx = np.zeros(xv.shape, g.dtype)
        np.add.at(np.moveaxis(dx, axis, 0), rows, np.moveaxis(g, axis, 0))
        return dx

    record(op, [x], [out], [grad])
    return out


def boolean_mask(tensor, mask, axis=None, name="boolean_mask") -> Tensor:
    """The slices of ``tensor`` where ``mask`` is true.

    ``mask`` (rank k) covers the dimensions ``axis .. axis + k - 1`` of ``tensor``; they are
    flattened into one dimension that keeps the true entries in row-major order.

    >>> import simdist as tf
    >>> tf.boolean_mask([[1, 2], [3, 4]], [True, False]).numpy()
    array([[1, 2]], dtype=int32)

    Raises:
        ValueError: ``mask`` is a scalar, or its shape does not match ``tensor``'s
            dimensions from ``axis`` (TF checks these shapes statically).
    """
    x = convert_to_tensor(tensor)
    m = convert_to_tensor(mask)
    mv = m._value
    if mv.ndim == 0:
        raise ValueError("mask cannot be scalar.")
    xv = x._value
    ax = 0 if axis is None else int(axis)
    covered = xv.shape[ax : ax + mv.ndim]  # as TF: a negative axis slices the shape itself
    if not 0 <= ax <= xv.ndim - mv.ndim or covered != mv.shape:
        raise ValueError(
            f"Shapes {tuple(covered)} and {tuple(mv.shape)} are incompatible: the mask's shape "
            f"must equal the tensor's dimensions {ax}..{ax + mv.ndim - 1} (tensor shape "
            f"{list(xv.shape)})."
        )
    flat_shape = xv.shape[:ax] + (int(np.prod(mv.shape)),) + xv.shape[ax + mv.ndim :]
    flat = make_tensor(xv.reshape(flat_shape), x._dtype)
    record("Reshape", [x], [flat], [lambda g: g.reshape(xv.shape)])
    rows = np.flatnonzero(mv.reshape(-1))
    return _take(flat, rows, ax, "GatherV2")


def repeat(input, repeats, axis=None, name=None) -> Tensor:
    """Each slice of ``input`` along ``axis`` repeated ``repeats`` times (a count, or one
    per slice); with ``axis=None`` the flattened input's elements are repeated.

    >>> import simdist as tf
    >>> tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy()
    array([[1, 2],
           [3, 4],
           [3, 4]], dtype=int32)

    Raises:
        ValueError: a list of ``repeats`` whose length differs from the axis's size.
        InvalidArgumentError: a negative count, or ``axis`` out of range.
    """
    x = convert_to_tensor(input)
    if axis is None:
        xv = x._value
        flat = make_tensor(xv.reshape(-1), x._dtype)
        record("Reshape", [x], [flat], [lambda g: g.reshape(xv.shape)])
        x, ax = flat, 0
    else:
        ndim = max(x._value.ndim, 1)
        if not -ndim <= int(axis) < ndim:
            raise ValueError(f"axis={axis} out of bounds: expected {-ndim}<=axis<{ndim}")
        ax = int(axis) % ndim
    counts = np.asarray(int_list(repeats, "repeats"), np.int64)
    counts_ndim = np.ndim(getattr(repeats, "_value", repeats))
    size = x._value.shape[ax] if x._value.ndim else 1
    for i, n in enumerate(counts):
        if n < 0:  # TF tiles [1, count] for one count: its kernel names multiples[1]
            where = "multiples[1]" if counts_ndim == 0 else f"repeats[{i}]"
            raise errors.InvalidArgumentError(
                f"Expected {where} >= 0, but got {n} [Op:Tile]; repeats are counts (0 or more)."
            )
    if counts_ndim == 0 or counts.size == 1:
        counts = np.full(size, counts[0] if counts.size else 0, np.int64)
    elif counts.size != size:
        raise ValueError(
            f"Dimensions {size} and {counts.size} are not compatible: repeats must be one "
            f"count or one per slice along axis {ax} ({size} slices)."
        )
    if x._value.ndim == 0:
        x = make_tensor(x._value.reshape(1), x._dtype)
    rows = np.repeat(np.arange(size), counts)
    return _take(x, rows, ax, "Repeat")


def roll(input, shift, axis, name=None) -> Tensor:
    """Elements rotated ``shift[i]`` places along ``axis[i]`` (negative: backwards); an axis
    listed twice rolls by the sum of its shifts.

    >>> import simdist as tf
    >>> tf.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy()
    array([3, 4, 0, 1, 2], dtype=int32)

    Raises:
        InvalidArgumentError: ``shift`` and ``axis`` differ in length, or an axis is out of
            range.
    """
    x = convert_to_tensor(input)
    xv = x._value
    if xv.ndim == 0:
        raise errors.InvalidArgumentError("input must be 1-D or higher [Op:Roll].")
    shifts = int_list(shift, "shift", vector=True)
    axes = int_list(axis, "axis", vector=True)
    if len(shifts) != len(axes):
        raise errors.InvalidArgumentError("shift and axis must have the same size [Op:Roll].")
    for a in axes:
        if not -xv.ndim <= a < xv.ndim:
            raise errors.InvalidArgumentError(f"axis {a} is out of range [Op:Roll].")
    axes = [a % xv.ndim for a in axes]
    out = make_tensor(np.roll(xv, shifts, axes) if axes else xv, x._dtype)
    back = [-s for s in shifts]
    record("Roll", [x], [out], [lambda g: np.roll(g, back, axes) if axes else g])
    return out
