"""Shape ops: reshape, transpose, squeeze, tile, broadcast_to, pad, where..., with gradients.

Joining and splitting (``concat``, ``stack``, ``split``...), creation (``zeros``,
``range``, ``one_hot``...) and indexing (``gather``, ``tensor[...]``) live in ``join_ops``,
``creation_ops`` and ``slicing_ops``; they are re-exported here, so ``array_ops.<name>``
reaches every op of TF's array namespace.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors, int_list, normalize_axis, unbroadcast
from simdist.core.ops.creation_ops import (
    fill,
    one_hot,
    ones,
    ones_like,
    range,
    zeros,
    zeros_like,
)
from simdist.core.ops.join_ops import concat, split, stack, stack_nested, unstack
from simdist.core.ops.slicing_ops import gather, gather_row, getitem, strided_slice
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "identity", "reshape", "expand_dims", "squeeze", "tile", "transpose", "broadcast_to",
    "pad", "where", "shape", "size", "rank", "shape_n", "identity_n",
    # re-exported from join_ops, creation_ops and slicing_ops
    "concat", "stack", "unstack", "split", "stack_nested",
    "fill", "one_hot", "ones", "ones_like", "range", "zeros", "zeros_like",
    "gather", "gather_row", "getitem", "strided_slice",
]  # fmt: skip


def identity(input, name=None) -> Tensor:
    """The same value as a new tensor; gradients pass through."""
    x = convert_to_tensor(input)
    out = make_tensor(x._value, x._dtype)
    record("Identity", [x], [out], [lambda g: g])
    return out


def reshape(tensor, shape, name=None) -> Tensor:
    """``tensor`` with a new shape of the same size; one dimension may be ``-1`` (inferred).

    Raises:
        InvalidArgumentError: the sizes differ, or more than one ``-1``.
    """
    x = convert_to_tensor(tensor)
    xv = x._value
    dims = int_list(shape, "shape", vector=True)
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1:
        raise errors.InvalidArgumentError(
            f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]} [Op:Reshape]."
        )
    known = math.prod([d for d in dims if d != -1])  # Python ints: exact, no NumPy call
    if any(d < -1 for d in dims):
        raise errors.InvalidArgumentError(f"Size values must be >= -1, got {dims} [Op:Reshape].")
    if unknown:
        if known == 0 or xv.size % known:
            raise errors.InvalidArgumentError(
                f"Input to reshape is a tensor with {xv.size} values, but the requested shape "
                f"requires a multiple of {known} [Op:Reshape]."
            )
        dims[unknown[0]] = xv.size // known
    elif known != xv.size:
        raise errors.InvalidArgumentError(
            f"Input to reshape is a tensor with {xv.size} values, but the requested shape has "
            f"{known} [Op:Reshape]."
        )
    out = make_tensor(xv.reshape(dims), x._dtype)
    record("Reshape", [x], [out], [lambda g: g.reshape(xv.shape)])
    return out


def expand_dims(input, axis, name=None) -> Tensor:
    """Insert a length-1 axis at ``axis`` (in ``[-rank-1, rank]``)."""
    x = convert_to_tensor(input)
    xv = x._value
    axis = int_list(axis, "axis")
    if len(axis) != 1:
        raise errors.InvalidArgumentError(f"axis must be a single integer, got {axis}.")
    ax = axis[0]
    if not -xv.ndim - 1 <= ax <= xv.ndim:
        raise errors.InvalidArgumentError(
            f"Tried to expand dim index {ax} for tensor with {xv.ndim} dimensions; use an "
            f"axis in [{-xv.ndim - 1}, {xv.ndim}]."
        )
    out = make_tensor(np.expand_dims(xv, ax), x._dtype)
    record("ExpandDims", [x], [out], [lambda g: g.reshape(xv.shape)])
    return out


def squeeze(input, axis=None, name=None) -> Tensor:
    """Remove length-1 axes: all of them, or those listed in ``axis``.

    Raises:
        InvalidArgumentError: a listed axis does not have length 1.
    """
    x = convert_to_tensor(input)
    xv = x._value
    if axis is None:
        axes = tuple(i for i, d in enumerate(xv.shape) if d == 1)
    else:
        axes = tuple(
            sorted(
                {normalize_axis(a, xv.ndim, "Squeeze") for a in int_list(axis, "axis", vector=True)}
            )
        )
        for a in axes:
            if xv.shape[a] != 1:
                raise errors.InvalidArgumentError(
                    f"Can not squeeze dim[{a}], expected a dimension of 1, got {xv.shape[a]} "
                    "[Op:Squeeze]."
                )
    out = make_tensor(np.squeeze(xv, axis=axes), x._dtype)
    record("Squeeze", [x], [out], [lambda g: g.reshape(xv.shape)])
    return out


def tile(input, multiples, name=None) -> Tensor:
    """Repeat ``input`` ``multiples[i]`` times along axis ``i``."""
    x = convert_to_tensor(input)
    xv = x._value
    if np.ndim(getattr(multiples, "_value", multiples)) != 1:
        raise errors.InvalidArgumentError(
            f"Expected multiples to be 1-D, but got {multiples!r} [Op:Tile]; pass one count per "
            f"axis, e.g. {[2] * max(xv.ndim, 1)}."
        )
    reps = int_list(multiples, "multiples")
    if len(reps) != xv.ndim:
        raise errors.InvalidArgumentError(
            f"Expected multiples argument to be a vector of length {xv.ndim} but got length "
            f"{len(reps)} [Op:Tile]."
        )
    for i, n in enumerate(reps):
        if n < 0:
            raise errors.InvalidArgumentError(
                f"Expected multiples[{i}] >= 0, but got {n} [Op:Tile]; each multiple is how "
                "many copies to make along that axis (0 or more)."
            )
    out = make_tensor(np.tile(xv, reps), x._dtype)

    def grad(g):
        interleaved = [n for pair in zip(reps, xv.shape, strict=True) for n in pair]
        return g.reshape(interleaved).sum(axis=tuple(builtins.range(0, 2 * xv.ndim, 2)))

    record("Tile", [x], [out], [grad])
    return out


def transpose(a, perm=None, conjugate=False, name="transpose") -> Tensor:
    """Permute axes: output axis ``i`` is input axis ``perm[i]`` (default: reversed)."""
    x = convert_to_tensor(a)
    xv = x._value
    order = (
        list(builtins.range(xv.ndim))[::-1] if perm is None else int_list(perm, "perm", vector=True)
    )
    in_range = all(-xv.ndim <= o < xv.ndim for o in order)
    if not in_range or sorted(o % max(xv.ndim, 1) for o in order) != list(builtins.range(xv.ndim)):
        raise errors.InvalidArgumentError(
            f"transpose expects a permutation of 0..{xv.ndim - 1}, got perm {order} [Op:Transpose]."
        )
    order = [o % xv.ndim for o in order]
    out = make_tensor(np.transpose(xv, order), x._dtype)
    inverse = np.argsort(order)
    record("Transpose", [x], [out], [lambda g: np.transpose(g, inverse)])
    return out


def broadcast_to(input, shape, name=None) -> Tensor:
    """``input`` broadcast (NumPy rules) to ``shape``; the gradient is summed back."""
    x = convert_to_tensor(input)
    xv = x._value
    dims = tuple(int_list(shape, "shape"))
    try:
        arr = np.broadcast_to(xv, dims)
    except ValueError:
        raise errors.InvalidArgumentError(
            f"Unable to broadcast tensor of shape {list(xv.shape)} to tensor of shape "
            f"{list(dims)} [Op:BroadcastTo]."
        ) from None
    out = make_tensor(arr, x._dtype)
    record("BroadcastTo", [x], [out], [lambda g: unbroadcast(g, xv.shape)])
    return out


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None) -> Tensor:
    """Pad with ``paddings[i] = [before, after]`` along each axis.

    ``mode`` is ``"CONSTANT"`` (``constant_values``), ``"REFLECT"`` or ``"SYMMETRIC"``.

    Raises:
        InvalidArgumentError: paddings of the wrong shape, negative, or too large for mode.
    """
    x = convert_to_tensor(tensor)
    xv = x._value
    flat = int_list(paddings, "paddings")
    if len(flat) != 2 * xv.ndim or any(p < 0 for p in flat):
        raise errors.InvalidArgumentError(
            f"paddings must be a non-negative [{xv.ndim}, 2] matrix for an input of rank "
            f"{xv.ndim}, got {paddings!r} [Op:Pad]."
        )
    pads = [(flat[2 * i], flat[2 * i + 1]) for i in builtins.range(xv.ndim)]
    mode = str(mode).upper()
    if mode == "CONSTANT":
        fill_value = np.asarray(convert_to_tensor(constant_values, dtype=x._dtype)._value)
        out = make_tensor(np.pad(xv, pads, constant_values=fill_value), x._dtype)
        window = tuple(slice(b, b + d) for (b, _), d in zip(pads, xv.shape, strict=True))
        record("PadV2", [x], [out], [lambda g: g[window]])
        return out
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}.")
    limit = 0 if mode == "REFLECT" else 1
    for (b, a), d in zip(pads, xv.shape, strict=True):
        if max(b, a) > d - 1 + limit:
            raise errors.InvalidArgumentError(
                f"paddings must be no greater than the dimension size minus {1 - limit} for "
                f"{mode} mode: got {[b, a]} for a dimension of {d} [Op:MirrorPad]."
            )
    out = make_tensor(np.pad(xv, pads, mode=mode.lower()), x._dtype)
    source = np.pad(np.arange(xv.size).reshape(xv.shape), pads, mode=mode.lower()).reshape(-1)

    def grad(g):
        summed = np.bincount(source, weights=g.reshape(-1), minlength=xv.size)
        return summed.astype(g.dtype).reshape(xv.shape)

    record("MirrorPad", [x], [out], [grad])
    return out


def where(condition, x=None, y=None, name=None) -> Tensor:
    """``x`` where ``condition`` is true, else ``y`` (broadcast together), as ``tf.where``.

    With ``x`` and ``y`` both ``None``: the int64 coordinates ``[n, rank]`` of true elements.
    """
    cond = convert_to_tensor(condition)
    if not cond._dtype.is_bool:
        raise errors.InvalidArgumentError(
            f"condition must be a bool tensor, got {cond._dtype.name}; compare first "
            "(e.g. tf.where(x > 0, ...))."
        )
    cv = cond._value
    if x is None and y is None:
        return make_tensor(np.argwhere(cv).astype(np.int64), dtypes.int64)
    if x is None or y is None:
        raise ValueError("x and y must both be given, or both be None.")
    x, y = as_tensors("SelectV2", x, y)
    xv, yv = x._value, y._value
    try:
        out = make_tensor(np.where(cv, xv, yv), x._dtype)
    except ValueError:
        raise errors.InvalidArgumentError(
            f"condition {list(cv.shape)}, x {list(xv.shape)} and y {list(yv.shape)} must be "
            "broadcastable [Op:SelectV2]."
        ) from None

    def grad_x(g):
        return unbroadcast(np.where(cv, g, 0).astype(g.dtype), xv.shape)

    def grad_y(g):
        return unbroadcast(np.where(cv, 0, g).astype(g.dtype), yv.shape)

    record("SelectV2", [cond, x, y], [out], [None, grad_x, grad_y])
    return out


def shape(input, out_type=dtypes.int32, name=None) -> Tensor:
    """The shape of ``input`` as a 1-D integer tensor."""
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    return make_tensor(np.array(x._value.shape, dtype=out_type._np), out_type)


def size(input, out_type=dtypes.int32, name=None) -> Tensor:
    """The number of elements of ``input`` as a scalar integer tensor."""
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    return make_tensor(np.array(x._value.size, dtype=out_type._np), out_type)


def rank(input, name=None) -> Tensor:
    """The number of dimensions of ``input`` as a scalar int32 tensor."""
    x = convert_to_tensor(input)
    return make_tensor(np.array(x._value.ndim, dtype=np.int32), dtypes.int32)


def shape_n(input, out_type=dtypes.int32, name=None) -> list[Tensor]:
    """The shapes of a list of tensors, one 1-D integer tensor each.

    Raises:
        InvalidArgumentError: an empty list (TF's ShapeN needs at least one input).
    """
    tensors = [convert_to_tensor(t) for t in input]
    if not tensors:
        raise errors.InvalidArgumentError(
            "Value for attr 'N' of 0 must be at least minimum 1 [Op:ShapeN]; pass a non-empty "
            "list of tensors."
        )
    out_type = dtypes.as_dtype(out_type)
    if out_type not in (dtypes.int32, dtypes.int64):
        raise errors.InvalidArgumentError(
            f"Value for attr 'out_type' of {out_type.name} is not in the list of allowed values: "
            "int32, int64 [Op:ShapeN]."
        )
    return [shape(t, out_type) for t in tensors]


def identity_n(input, name=None) -> list[Tensor]:
    """Each tensor of a list as a new tensor; gradients pass through."""
    return [identity(t) for t in input]
