"""Indexing: ``tensor[...]`` (``getitem``), ``strided_slice``, ``slice``, ``reverse``,
``gather``, with gradients.

``tensor[key]`` accepts what TF accepts: Python ints, slices (with steps, possibly
negative), ``...``, ``None`` (``tf.newaxis``) and scalar int32/int64 tensors, also as slice
bounds. Lists, float indices and boolean masks raise TypeError, as in TF (use ``tf.gather``
or ``tf.boolean_mask``). Results of basic indexing are views: nothing is copied.
"""

from __future__ import annotations

import numbers
from builtins import slice as builtins_slice

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["getitem", "strided_slice", "slice", "reverse", "gather", "gather_row", "newaxis"]

newaxis = None  # tf.newaxis: inserts a length-1 axis in tensor[...]

_SLICE_TYPE_ERROR = (
    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
    "tf.int32/tf.int64 tensors are valid indices"
)


def _as_int(idx) -> int:
    """A Python int from an index entry, or TypeError as TF raises it."""
    if isinstance(idx, numbers.Integral):
        return int(idx)
    value = getattr(idx, "_value", None)
    if hasattr(idx, "_to_tensor"):
        value = convert_to_tensor(idx)._value
    if value is None and isinstance(idx, np.ndarray):
        value = idx
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype in (np.int32, np.int64):
        return int(value)
    raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _slice_part(part):
    return None if part is None else _as_int(part)


def _numpy_key(key, shape: tuple[int, ...]) -> tuple:
    """Validate a TF index and turn it into an equivalent NumPy basic-indexing tuple."""
    spec = key if isinstance(key, tuple) else (key,)
    np_key: list = []
    for idx in spec:
        if idx is None or idx is Ellipsis:
            np_key.append(idx)
        elif isinstance(idx, builtins_slice):
            step = _slice_part(idx.step)
            if step == 0:
                raise errors.InvalidArgumentError(
                    "slice step (stride) must be non-zero [Op:StridedSlice]."
                )
            np_key.append(builtins_slice(_slice_part(idx.start), _slice_part(idx.stop), step))
        else:
            np_key.append(_as_int(idx))
    ellipses = sum(1 for k in np_key if k is Ellipsis)
    if ellipses > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed; use at most one `...`.")
    consumed = sum(1 for k in np_key if k is not None and k is not Ellipsis)
    ndim = len(shape)
    if consumed > ndim:
        raise errors.InvalidArgumentError(
            f"Index out of range using input dim {ndim}; input has only {ndim} dims "
            "[Op:StridedSlice]; use fewer indices than the tensor has dimensions."
        )
    dim = 0
    for k in np_key:
        if k is Ellipsis:
            dim += ndim - consumed
        elif isinstance(k, int):
            if not -shape[dim] <= k < shape[dim]:
                raise errors.InvalidArgumentError(
                    f"slice index {k} of dimension {dim} out of bounds [Op:StridedSlice]; the "
                    f"dimension has size {shape[dim]}."
                )
            dim += 1
        elif k is not None:
            dim += 1
    return tuple(np_key)


def getitem(tensor, key) -> Tensor:
    """``tensor[key]`` with TF's rules; the gradient scatters back into zeros.

    Raises:
        TypeError: an index that is not an int, slice, ``...``, ``None`` or scalar int tensor.
        InvalidArgumentError: an integer index out of range, or too many indices.
    """
    x = convert_to_tensor(tensor)
    xv = x._value
    np_key = _numpy_key(key, xv.shape)
    out = make_tensor(xv[np_key], x._dtype)

    def grad(g):
        dx = np.zeros(xv.shape, g.dtype)
        dx[np_key] = g
        return dx

    record("StridedSlice", [x], [out], [grad])
    return out


def gather_row(tensor, i: int) -> Tensor:
    """``tensor[i]`` for iteration over the first axis (``for row in tensor``)."""
    return getitem(tensor, i)


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def strided_slice(
    input_,
    begin,
    end,
    strides=None,
    begin_mask=0,
    end_mask=0,
    ellipsis_mask=0,
    new_axis_mask=0,
    shrink_axis_mask=0,
    var=None,
    name=None,
) -> Tensor:
    """``tf.strided_slice``: a slice given as begin/end/strides lists and bit masks.

    Bit ``i`` of a mask applies to entry ``i``: ``begin_mask``/``end_mask`` ignore that
    bound, ``ellipsis_mask`` makes the entry ``...``, ``new_axis_mask`` makes it ``None``,
    ``shrink_axis_mask`` takes the single index ``begin[i]``.
    """
    begin = [_as_int(b) for b in np.asarray(convert_to_tensor(begin)._value).reshape(-1)]
    end = [_as_int(e) for e in np.asarray(convert_to_tensor(end)._value).reshape(-1)]
    if strides is None:
        strides = [1] * len(begin)
    strides = [_as_int(s) for s in np.asarray(convert_to_tensor(strides)._value).reshape(-1)]
    if not len(begin) == len(end) == len(strides):
        raise ValueError(
            f"begin, end and strides must have the same length, got {len(begin)}, {len(end)} "
            f"and {len(strides)}."
        )
    key: list = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        if _bit(ellipsis_mask, i):
            key.append(Ellipsis)
        elif _bit(new_axis_mask, i):
            key.append(None)
        elif _bit(shrink_axis_mask, i):
            key.append(b)
        else:
            key.append(
                builtins_slice(
                    None if _bit(begin_mask, i) else b, None if _bit(end_mask, i) else e, s
                )
            )
    return getitem(input_, tuple(key))


def _int_list(value, what: str, op: str) -> list[int]:
    """A 1-D list of ints from a list, tuple, array or integer tensor."""
    arr = np.asarray(convert_to_tensor(value)._value)
    if arr.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(f"{op}: {what} must be integers, got {arr.dtype}.")
    if arr.ndim > 1:
        raise errors.InvalidArgumentError(f"{op}: {what} must be a vector, got shape {arr.shape}.")
    return [int(v) for v in arr.reshape(-1)]


def slice(input_, begin, size, name=None) -> Tensor:  # TF's name; Python's is builtins_slice
    """``tf.slice``: ``size[i]`` elements from ``begin[i]`` on each axis; ``size[i] = -1``
    takes the rest of the axis. The gradient pads the upstream gradient back with zeros.

    Raises:
        InvalidArgumentError: ``begin``/``size`` of another length than the rank, or a
            slice that leaves the tensor.
    """
    x = convert_to_tensor(input_)
    xv = x._value
    starts, sizes = _int_list(begin, "begin", "Slice"), _int_list(size, "size", "Slice")
    if len(starts) != xv.ndim or len(sizes) != xv.ndim:
        raise errors.InvalidArgumentError(
            f"Expected begin and size arguments to be 1-D tensors of size {xv.ndim} (the "
            f"input's rank), but got {len(starts)} and {len(sizes)} [Op:Slice]."
        )
    key = []
    for axis, (b, n, dim) in enumerate(zip(starts, sizes, xv.shape, strict=True)):
        n = dim - b if n == -1 else n
        if b < 0 or n < 0 or b + n > dim:
            raise errors.InvalidArgumentError(
                f"Expected size[{axis}] in [0, {dim - b}] and begin[{axis}] in [0, {dim}] for "
                f"an axis of length {dim}, got begin {b} and size {sizes[axis]} [Op:Slice]."
            )
        key.append(builtins_slice(b, b + n))
    return getitem(x, tuple(key))


def reverse(tensor, axis, name=None) -> Tensor:
    """``tf.reverse``: the elements in reverse order along each axis of ``axis``.

    Raises:
        InvalidArgumentError: an axis out of range, or given twice.
    """
    x = convert_to_tensor(tensor)
    xv = x._value
    axes = []
    for a in _int_list(axis, "axis", "ReverseV2"):
        if not -xv.ndim <= a < xv.ndim:
            raise errors.InvalidArgumentError(
                f"axis {a} is out of range for a tensor of rank {xv.ndim} [Op:ReverseV2]."
            )
        if a % xv.ndim in axes:
            raise errors.InvalidArgumentError(f"axis {a} specified more than once [Op:ReverseV2].")
        axes.append(a % xv.ndim)
    every, backwards = builtins_slice(None), builtins_slice(None, None, -1)
    key = tuple(backwards if d in axes else every for d in range(xv.ndim))
    out = make_tensor(xv[key], x._dtype)
    record("ReverseV2", [x], [out], [lambda g: g[key]])
    return out


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None) -> Tensor:
    """Slices along ``axis`` of ``params`` picked by integer ``indices``.

    The output shape is ``params.shape[:axis] + indices.shape[batch_dims:] +
    params.shape[axis + 1:]``. With ``batch_dims`` b, the first b dimensions of ``params``
    and ``indices`` are batch dimensions (equal sizes) and batch element i gathers from
    ``params[i]`` with ``indices[i]``; ``axis`` then defaults to b and must be at least b.
    The gradient scatter-adds into zeros (repeated indices accumulate).

    Raises:
        InvalidArgumentError: an index outside ``[0, params.shape[axis])``, indices that are
            not integers, ``batch_dims`` or ``axis`` out of range, or batch dimensions that
            differ (as TF's kernel).
    """
    p = convert_to_tensor(params)
    idx = convert_to_tensor(indices)
    if idx._dtype.name not in ("int16", "int32", "int64"):
        raise errors.InvalidArgumentError(  # TF: the GatherV2 kernel has no such Tindices
            f"gather indices must be integers (int16, int32 or int64), got {idx._dtype.name}; "
            "tf.cast them. [Op:GatherV2]"
        )
    pv, iv = p._value, idx._value
    batch_dims = _gather_batch_dims(batch_dims, iv.ndim, pv.ndim)
    axis = batch_dims if axis is None else _as_int(axis)
    if not -pv.ndim <= axis < pv.ndim:
        raise errors.InvalidArgumentError(
            f"Expected axis in the range [{-pv.ndim}, {pv.ndim}), but got {axis} [Op:GatherV2]."
        )
    axis %= pv.ndim
    if axis < batch_dims:
        raise errors.InvalidArgumentError(
            f"gather: axis ({axis}) must be at least batch_dims ({batch_dims}) [Op:GatherV2]."
        )
    if pv.shape[:batch_dims] != iv.shape[:batch_dims]:
        raise errors.InvalidArgumentError(
            f"gather: params.shape[:{batch_dims}] = {list(pv.shape[:batch_dims])} must equal "
            f"indices.shape[:{batch_dims}] = {list(iv.shape[:batch_dims])} (the batch "
            "dimensions) [Op:GatherV2]."
        )
    size = pv.shape[axis]
    bad = (iv < 0) | (iv >= size)
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise errors.InvalidArgumentError(
            f"indices{list(where)} = {int(iv[where])} is not in [0, {size}) [Op:GatherV2]."
        )
    if batch_dims:
        value, grad = _batched_gather(pv, iv, axis, batch_dims)
        out = make_tensor(value, p._dtype)
        record("GatherV2", [p, idx], [out], [grad, None])
        return out
    out = make_tensor(np.take(pv, iv, axis=axis), p._dtype)
    k = iv.ndim

    def grad(g):
        dx = np.zeros(pv.shape, g.dtype)
        moved = np.moveaxis(g, list(range(axis, axis + k)), list(range(k)))
        np.add.at(np.moveaxis(dx, axis, 0), iv, moved)
        return dx

    record("GatherV2", [p, idx], [out], [grad, None])
    return out


def _gather_batch_dims(batch_dims, indices_rank: int, params_rank: int) -> int:
    b = _as_int(batch_dims)
    if b < 0:
        b += indices_rank
    if not 0 <= b <= indices_rank or b >= params_rank and params_rank:
        raise errors.InvalidArgumentError(
            f"gather: batch_dims={batch_dims} must be in [-{indices_rank}, {indices_rank}] "
            f"(the rank of indices) and less than the rank of params ({params_rank}) "
            "[Op:GatherV2]."
        )
    return b


def _batched_gather(pv: np.ndarray, iv: np.ndarray, axis: int, b: int):
    """``gather`` with ``b`` batch dimensions: ``(value, gradient function)``.

    The batch dimensions are flattened into one of size B, the gathered axis is moved next
    to it, and one fancy index ``[batch, indices]`` picks every slice at once.
    """
    batch = int(np.prod(pv.shape[:b], dtype=np.int64))
    mid, rest = pv.shape[b:axis], pv.shape[axis + 1 :]
    q = np.moveaxis(pv.reshape((batch,) + pv.shape[b:]), axis - b + 1, 1)  # [B, Pa, mid, rest]
    ind = iv.reshape((batch,) + iv.shape[b:])
    k = ind.ndim - 1
    rows = np.arange(batch).reshape((batch,) + (1,) * k)
    picked = q[rows, ind]  # [B, I..., mid..., rest...]
    i_axes, after_mid = list(range(1, 1 + k)), list(range(1 + len(mid), 1 + len(mid) + k))
    value = np.moveaxis(picked, i_axes, after_mid).reshape(
        pv.shape[:axis] + iv.shape[b:] + rest
    )

    def grad(g):
        gm = np.moveaxis(g.reshape((batch,) + mid + ind.shape[1:] + rest), after_mid, i_axes)
        dq = np.zeros(q.shape, g.dtype)
        np.add.at(dq, (rows, ind), gm)
        return np.moveaxis(dq, 1, axis - b + 1).reshape(pv.shape)

    return value, grad
