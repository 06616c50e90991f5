"""Joining and splitting tensors: ``concat``, ``stack``, ``unstack``, ``split``, with gradients.

``stack_nested`` packs a nested list that mixes tensors and Python numbers (what
``tf.convert_to_tensor([t1, t2])`` does), differentiably.
"""

from __future__ import annotations

import builtins

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors, int_list, normalize_axis
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["concat", "stack", "unstack", "split", "stack_nested"]


def concat(values, axis, name="concat") -> Tensor:
    """Join tensors along an existing ``axis``; other dimensions must match.

    Raises:
        InvalidArgumentError: ranks, dtypes or non-axis dimensions differ.
    """
    if isinstance(values, Tensor) or hasattr(values, "_to_tensor"):
        values = [values]
    if any(getattr(type(v), "_is_ragged", False) for v in values):
        from simdist.core.ragged import ragged_math

        return ragged_math.concat(values, axis)
    if not list(values):
        raise errors.InvalidArgumentError(
            "concat needs at least one tensor, got an empty list [Op:ConcatV2]; pass the "
            "tensors to join, e.g. tf.concat([a, b], axis=0)."
        )
    tensors = as_tensors("ConcatV2", *values)
    first = tensors[0]._value
    if first.ndim == 0:
        raise errors.InvalidArgumentError("Can't concatenate scalars (use tf.stack instead).")
    if np.ndim(getattr(axis, "_value", axis)) != 0:
        raise errors.InvalidArgumentError(
            f"concat's axis must be a scalar integer, got {axis!r} [Op:ConcatV2]."
        )
    ax = normalize_axis(int_list(axis, "axis")[0], first.ndim, "ConcatV2")
    for i, t in enumerate(tensors[1:], start=1):
        s = t._value.shape
        if len(s) != first.ndim or any(
            a != b for j, (a, b) in enumerate(zip(first.shape, s, strict=True)) if j != ax
        ):
            raise errors.InvalidArgumentError(
                f"ConcatOp : Dimension mismatch: shape[0] = {list(first.shape)} vs. shape[{i}] "
                f"= {list(s)}; all dimensions except axis {ax} must be equal [Op:ConcatV2]."
            )
    out = make_tensor(np.concatenate([t._value for t in tensors], axis=ax), tensors[0]._dtype)
    bounds = np.cumsum([t._value.shape[ax] for t in tensors])[:-1]

    def piece(i: int):
        return lambda g: np.split(g, bounds, axis=ax)[i]

    record("ConcatV2", tensors, [out], [piece(i) for i in builtins.range(len(tensors))])
    return out


def stack(values, axis=0, name="stack") -> Tensor:
    """Join same-shape tensors along a new ``axis``.

    Raises:
        InvalidArgumentError: shapes or dtypes differ.
    """
    if isinstance(values, Tensor) or hasattr(values, "_to_tensor"):
        values = [values]
    values = list(values)
    if isinstance(axis, bool) or not isinstance(axis, (int, float, np.integer, np.floating)):
        raise TypeError(f"stack's axis must be an int, got {axis!r}.")
    if not values:  # TF 2.21: stack([]) is an empty float32 vector
        return make_tensor(np.zeros(0, np.float32), dtypes.float32)
    tensors = as_tensors("Pack", *values)
    first = tensors[0]._value.shape
    for i, t in enumerate(tensors[1:], start=1):
        if t._value.shape != first:
            raise errors.InvalidArgumentError(
                f"Shapes of all inputs must match: values[0].shape = {list(first)} != "
                f"values[{i}].shape = {list(t._value.shape)} [Op:Pack]."
            )
    ax = normalize_axis(axis, len(first) + 1, "Pack")
    out = make_tensor(np.stack([t._value for t in tensors], axis=ax), tensors[0]._dtype)

    def piece(i: int):
        return lambda g: np.take(g, i, axis=ax)

    record("Pack", tensors, [out], [piece(i) for i in builtins.range(len(tensors))])
    return out


def unstack(value, num=None, axis=0, name="unstack") -> list[Tensor]:
    """Split a tensor along ``axis`` into a list of tensors of one rank less."""
    x = convert_to_tensor(value)
    xv = x._value
    if xv.ndim == 0:
        raise ValueError("Cannot unstack a scalar (rank 0) tensor.")
    ax = normalize_axis(axis, xv.ndim, "Unpack")
    if num is not None and num != xv.shape[ax]:
        raise ValueError(f"num={num} does not match the axis size {xv.shape[ax]}.")
    outs = [make_tensor(np.take(xv, i, axis=ax), x._dtype) for i in builtins.range(xv.shape[ax])]
    record("Unpack", [x], outs, [lambda *gs: np.stack(gs, axis=ax)])
    return outs


def split(value, num_or_size_splits, axis=0, num=None, name="split") -> list[Tensor]:
    """Split along ``axis`` into ``n`` equal parts, or parts of the listed sizes.

    One listed size may be ``-1`` (the rest).

    Raises:
        InvalidArgumentError: the sizes do not add up to the axis length.
    """
    x = convert_to_tensor(value)
    xv = x._value
    ax = normalize_axis(int_list(axis, "axis")[0], xv.ndim, "Split")
    length = xv.shape[ax]
    if (
        np.ndim(
            num_or_size_splits._value
            if isinstance(num_or_size_splits, Tensor)
            else num_or_size_splits
        )
        == 0
    ):
        count = getattr(num_or_size_splits, "_value", num_or_size_splits)
        if isinstance(count, (bool, np.bool_)) or np.asarray(count).dtype.kind not in "iu":
            raise TypeError(
                f"num_or_size_splits must be an int or a list of ints, got {num_or_size_splits!r}."
            )
        parts = int(count)
        if parts <= 0 or length % parts:
            raise errors.InvalidArgumentError(
                f"Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {ax} (size = {length}) and num_split {parts} [Op:Split]."
            )
        sizes = [length // parts] * parts
    else:
        sizes = int_list(num_or_size_splits, "num_or_size_splits")
        if not sizes:
            raise errors.InvalidArgumentError(
                "num_or_size_splits is an empty list: num_split must be at least 1 [Op:SplitV]; "
                "pass the sizes of the parts, e.g. [2, -1]."
            )
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = length - (sum(sizes) + 1)
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise errors.InvalidArgumentError(
                f"Determined shape must either match input shape along split_dim exactly if "
                f"fully specified, or be less than the size of the input along split_dim if "
                f"not fully specified. Got: {sum(sizes)} vs. {length} (sizes {sizes}) "
                "[Op:SplitV]."
            )
    bounds = np.cumsum(sizes)[:-1]
    outs = [make_tensor(p, x._dtype) for p in np.split(xv, bounds, axis=ax)]
    record("SplitV", [x], outs, [lambda *gs: np.concatenate(gs, axis=ax)])
    return outs


def stack_nested(value, dtype=None) -> Tensor:
    """Pack a nested list mixing tensors and Python numbers into one tensor (differentiable).

    Used by ``constant``/``convert_to_tensor`` for ``[t1, t2]``. Python leaves take the dtype
    of the first tensor leaf (or ``dtype`` when given).
    """
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is None:
        pending = [value]
        while pending and dtype is None:
            item = pending.pop()
            if isinstance(item, (list, tuple)):
                pending.extend(reversed(item))
            elif isinstance(item, Tensor) or hasattr(item, "_to_tensor"):
                dtype = convert_to_tensor(item)._dtype

    def build(item) -> Tensor:
        if isinstance(item, (list, tuple)):
            if not item:
                raise ValueError("Cannot pack an empty list that sits beside tensors.")
            return stack([build(v) for v in item], axis=0)
        if isinstance(item, Tensor) and item._dtype != dtype:
            raise TypeError(
                f"Cannot convert a list containing a tensor of dtype {item._dtype.name} to "
                f"{dtype.name} (Tensor is: {item!r}); tf.cast the tensors to one dtype first."
            )
        return convert_to_tensor(item, dtype=dtype)

    return build(value)
