"""N-d indexing: ``gather_nd``, ``scatter_nd`` and ``tensor_scatter_nd_update/add/sub``.

An index tensor of shape ``[..., M]`` names, in its last axis, the first ``M`` coordinates
of a slice of the indexed tensor (its ``params``, or the ``shape`` scattered into); the
slice has the remaining dims ``shape[M:]``. So ``gather_nd`` returns
``indices.shape[:-1] + params.shape[M:]`` and the updates of a scatter must have that same
shape. Gradients: ``gather_nd`` scatter-adds back into zeros (repeated indices accumulate);
a scatter's ``updates`` get the incoming gradient gathered at the indices.

Repeated indices: ``scatter_nd`` and ``tensor_scatter_nd_add/sub`` sum them, as TF does.
For ``tensor_scatter_nd_update`` TF leaves the order unspecified; simdist applies the
updates in index order, so the last one wins (deterministic, documented in
docs/differences.md). Out-of-range indices raise InvalidArgumentError (as TF on CPU; TF on
GPU silently ignores them, which simdist does not imitate).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors, int_list
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "gather_nd",
    "scatter_nd",
    "tensor_scatter_nd_update",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
]


def _indices(indices, op: str) -> np.ndarray:
    idx = convert_to_tensor(indices)
    if not idx._dtype.is_integer:
        raise errors.InvalidArgumentError(
            f"Value for attr 'Tindices' of {idx._dtype.name} is not in the list of allowed "
            f"values: int16, int32, int64 [Op:{op}]; indices must be integers (tf.cast them)."
        )
    iv = idx._value
    if iv.ndim == 0:
        raise errors.InvalidArgumentError(
            f"indices must be at least a vector, got a scalar [Op:{op}]; pass [[i, j]] for "
            "one element, [[i]] for one row."
        )
    return iv


def _flat_positions(iv: np.ndarray, shape: tuple[int, ...], op: str, what: str) -> np.ndarray:
    """Row-major positions (over ``shape[:M]``) of each index row; checks every row is in range."""
    depth = iv.shape[-1]
    if depth > len(shape):
        raise errors.InvalidArgumentError(
            f"index innermost dimension length must be <= {what or 'output '}rank; saw: "
            f"{depth} vs. {len(shape)} [Op:{op}]; an index row names one coordinate per dim."
        )
    rows = iv.reshape(-1, depth).astype(np.int64)
    bounds = np.asarray(shape[:depth], dtype=np.int64)
    bad = np.any((rows < 0) | (rows >= bounds), axis=1)
    if np.any(bad):
        first = int(np.flatnonzero(bad)[0])
        where = [int(i) for i in np.unravel_index(first, iv.shape[:-1])]
        raise errors.InvalidArgumentError(
            f"indices{where} = {rows[first].tolist()} does not index into {what}shape "
            f"{list(shape)} [Op:{op}]; each coordinate i of dim d must satisfy "
            "0 <= i < shape[d]."
        )
    if depth == 0:
        return np.zeros(rows.shape[0], dtype=np.int64)
    return np.ravel_multi_index(tuple(rows.T), shape[:depth])


def _gather(pv: np.ndarray, iv: np.ndarray, op: str) -> tuple[np.ndarray, np.ndarray]:
    """The gathered slices and the flat positions they came from."""
    depth = iv.shape[-1]
    flat = _flat_positions(iv, pv.shape, op, "param ")
    slices = pv.reshape((-1,) + pv.shape[depth:])[flat]
    return slices.reshape(iv.shape[:-1] + pv.shape[depth:]), flat


def _scatter_add_into(base: np.ndarray, flat: np.ndarray, depth: int, updates: np.ndarray):
    """``base[flat] += updates`` on ``base`` viewed as [positions, slice...], repeats summed."""
    view = base.reshape((-1,) + base.shape[depth:])
    np.add.at(view, flat, updates.reshape((-1,) + base.shape[depth:]))


def gather_nd(params, indices, batch_dims=0, name=None) -> Tensor:
    """Slices of ``params`` named by the rows of ``indices`` (``tf.gather_nd``).

    >>> import simdist as tf
    >>> tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]).numpy()
    array([3, 2], dtype=int32)

    Args:
        params: the tensor to index.
        indices: an int tensor ``[..., M]`` with ``M <= rank(params) - batch_dims``.
        batch_dims: leading dims that ``params`` and ``indices`` share; each batch entry
            indexes its own slice of ``params``.

    Returns:
        ``indices.shape[:-1] + params.shape[batch_dims + M:]`` elements of ``params``' dtype.

    Raises:
        InvalidArgumentError: an index out of range, ``M`` too large, a scalar or
            non-integer ``indices``, or batch dims that differ.
    """
    p = convert_to_tensor(params)
    iv = _indices(indices, "GatherNd")
    pv = p._value
    batch_dims = int(batch_dims)
    if batch_dims < 0 or batch_dims >= iv.ndim or batch_dims > pv.ndim:
        raise errors.InvalidArgumentError(
            f"batch_dims must be in [0, rank(indices) - 1] = [0, {iv.ndim - 1}] and at most "
            f"rank(params) = {pv.ndim}, got {batch_dims} [Op:GatherNd]."
        )
    lead = pv.shape[:batch_dims]
    if iv.shape[:batch_dims] != lead:
        raise errors.InvalidArgumentError(
            f"params and indices must agree on their {batch_dims} batch dims, got "
            f"{list(lead)} and {list(iv.shape[:batch_dims])} [Op:GatherNd]."
        )
    count = int(np.prod(lead, dtype=np.int64))
    pb = pv.reshape((count,) + pv.shape[batch_dims:])
    ib = iv.reshape((count,) + iv.shape[batch_dims:])
    parts = [_gather(pb[b], ib[b], "GatherNd") for b in range(count)]
    inner_shape = ib.shape[1:-1] + pb.shape[1 + iv.shape[-1] :]
    values = [part[0] for part in parts]
    out_value = np.stack(values) if values else np.zeros((0,) + inner_shape, pv.dtype)
    out = make_tensor(out_value.reshape(lead + inner_shape), p._dtype)
    depth = iv.shape[-1]

    def grad(g):
        dx = np.zeros(pb.shape, g.dtype)
        gb = g.reshape((count,) + inner_shape)
        for b, (_, flat) in enumerate(parts):
            _scatter_add_into(dx[b], flat, depth, gb[b])
        return dx.reshape(pv.shape)

    record("GatherNd", [p], [out], [grad])
    return out


def _check_updates(op: str, iv: np.ndarray, updates_shape, shape) -> None:
    expected = tuple(iv.shape[:-1]) + tuple(shape[iv.shape[-1] :])
    if tuple(updates_shape) != expected:
        raise errors.InvalidArgumentError(
            f"updates must have shape indices.shape[:-1] + shape[indices.shape[-1]:] = "
            f"{list(expected)}, got {list(updates_shape)} (indices {list(iv.shape)}, shape "
            f"{list(shape)}) [Op:{op}]."
        )


def scatter_nd(indices, updates, shape, name=None) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (``tf.scatter_nd``).

    Repeated indices add up.

    >>> import simdist as tf
    >>> tf.scatter_nd([[1], [3], [1]], [10, 20, 5], [4]).numpy()
    array([ 0, 15,  0, 20], dtype=int32)

    Raises:
        InvalidArgumentError: an index out of range, a negative dimension, or updates whose
            shape is not ``indices.shape[:-1] + shape[indices.shape[-1]:]``.
    """
    iv = _indices(indices, "ScatterNd")
    u = convert_to_tensor(updates)
    dims = tuple(int_list(shape, "shape", vector=True))
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(
            f"Dimension -1 must be >= 0: shape {list(dims)} has a negative dimension "
            "[Op:ScatterNd]."
        )
    uv = u._value
    _check_updates("ScatterNd", iv, uv.shape, dims)
    flat = _flat_positions(iv, dims, "ScatterNd", "")
    depth = iv.shape[-1]
    value = np.zeros(dims, uv.dtype)
    _scatter_add_into(value, flat, depth, uv)
    out = make_tensor(value, u._dtype)

    def grad(g):
        return g.reshape((-1,) + dims[depth:])[flat].reshape(uv.shape)

    record("ScatterNd", [u], [out], [grad])
    return out


def _tensor_scatter(op: str, tensor, indices, updates, mode: str) -> Tensor:
    iv = _indices(indices, op)
    t, u = as_tensors(op, tensor, updates)
    tv, uv = t._value, u._value
    _check_updates(op, iv, uv.shape, tv.shape)
    flat = _flat_positions(iv, tv.shape, op, "")
    depth = iv.shape[-1]
    value = tv.copy()
    if mode == "update":
        view = value.reshape((-1,) + tv.shape[depth:])
        rows = uv.reshape((-1,) + tv.shape[depth:])
        for position, row in zip(flat, rows, strict=True):  # index order: the last one wins
            view[position] = row
    else:
        _scatter_add_into(value, flat, depth, uv if mode == "add" else -uv)
    out = make_tensor(value, t._dtype)
    sign = -1.0 if mode == "sub" else 1.0

    def grad_tensor(g):
        if mode != "update":
            return g
        dx = g.copy()
        dx.reshape((-1,) + tv.shape[depth:])[flat] = 0
        return dx

    def grad_updates(g):
        picked = g.reshape((-1,) + tv.shape[depth:])[flat].reshape(uv.shape)
        return picked if sign > 0 else -picked

    record(op, [t, u], [out], [grad_tensor, grad_updates])
    return out


def tensor_scatter_nd_update(tensor, indices, updates, name=None) -> Tensor:
    """A copy of ``tensor`` with the slices at ``indices`` replaced by ``updates``.

    Repeated indices: the last update in index order wins (TF leaves this unspecified).

    >>> import simdist as tf
    >>> tf.tensor_scatter_nd_update([1, 2, 3, 4], [[0], [2]], [9, 8]).numpy()
    array([9, 2, 8, 4], dtype=int32)

    Raises:
        InvalidArgumentError: an index out of range, updates of the wrong shape, or
            ``tensor`` and ``updates`` of different dtypes.
    """
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates, "update")


def tensor_scatter_nd_add(tensor, indices, updates, name=None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (repeats add up)."""
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates, "add")


def tensor_scatter_nd_sub(tensor, indices, updates, name=None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices`` (repeats add up)."""
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates, "sub")
