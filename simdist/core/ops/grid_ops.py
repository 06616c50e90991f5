"""Regular grids: ``eye``, ``linspace``, ``meshgrid``.

``linspace`` computes ``start + i * (stop - start) / (num - 1)`` in the inputs' float dtype
(integers become float64, as in TF) and ends exactly on ``stop``; its gradient flows to
``start`` and ``stop``. ``meshgrid`` broadcasts 1-D inputs against each other (``"xy"``:
Cartesian, the first two output axes swapped; ``"ij"``: matrix indexing); each output's
gradient is summed back onto its input.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors, normalize_axis, unbroadcast
from simdist.core.ops.creation_ops import _dims
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["eye", "linspace", "meshgrid"]


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None) -> Tensor:
    """Identity matrices ``[*batch_shape, num_rows, num_columns]`` (square by default).

    >>> import simdist as tf
    >>> tf.eye(2, 3).numpy()
    array([[1., 0., 0.],
           [0., 1., 0.]], dtype=float32)

    Raises:
        InvalidArgumentError: a negative size.
    """
    dtype = dtypes.as_dtype(dtype)
    sizes = [num_rows, num_rows if num_columns is None else num_columns]
    values = [convert_to_tensor(s) for s in sizes]
    if any(not v._dtype.is_integer or v._value.ndim for v in values):
        raise TypeError(
            "Arguments `num_rows` and `num_columns` must be positive integer values. Received: "
            f"num_rows={sizes[0]}, num_columns={sizes[1]}"
        )
    rows, cols = (int(v._value) for v in values)
    batch = () if batch_shape is None else _dims(batch_shape)
    for d in (rows, cols):
        if d < 0:
            raise errors.InvalidArgumentError(f"Dimension {d} must be >= 0 [Op:Fill].")
    matrix = np.eye(rows, cols, dtype=dtype._np)
    return make_tensor(np.ascontiguousarray(np.broadcast_to(matrix, batch + matrix.shape)), dtype)


def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive, along ``axis``
    (``start`` and ``stop`` may be tensors of one shape: one sequence per element).

    >>> import simdist as tf
    >>> tf.linspace(0., 1., 5).numpy()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)

    Raises:
        InvalidArgumentError: ``start`` and ``stop`` of different dtypes, or a negative
            ``num``.
    """
    lo = convert_to_tensor(start)  # as TF: stop is converted to start's dtype
    try:
        hi = convert_to_tensor(stop, dtype=lo._dtype)
    except (TypeError, ValueError) as e:
        raise ValueError(f"stop: {e}") from None
    if lo._dtype.is_integer:
        lo = make_tensor(lo._value.astype(np.float64))
        hi = make_tensor(hi._value.astype(np.float64))
    elif not lo._dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {lo._dtype.name} is not in the list of allowed values: "
            "bfloat16, half, float, double [Op:LinSpace]."
        )
    count = int(convert_to_tensor(num)._value)
    if count < 0:
        raise errors.InvalidArgumentError(f"Requires num >= 0: {count} [Op:LinSpace].")
    lov, hiv = np.broadcast_arrays(lo._value, hi._value)
    shape = lov.shape
    ax = normalize_axis(axis, len(shape) + 1, "LinSpace")
    ftype = lov.dtype
    steps = np.arange(count, dtype=ftype)
    # fraction i / (num - 1) of the way (exactly 1 at the end); num == 1 gives just start
    frac = steps / ftype.type(count - 1) if count > 1 else np.zeros(count, ftype)
    frac_b = frac.reshape((count,) + (1,) * len(shape))
    values = lov + frac_b * (hiv - lov)
    if count > 1:
        values[-1] = hiv
    out = make_tensor(np.ascontiguousarray(np.moveaxis(values, 0, ax)), lo._dtype)

    def along(g, weights):
        pulled = np.sum(np.moveaxis(g, ax, 0) * weights.reshape(frac_b.shape), axis=0)
        return pulled.astype(g.dtype)

    los, his = lo._value.shape, hi._value.shape
    record(
        "LinSpace",
        [lo, hi],
        [out],
        [
            lambda g: unbroadcast(along(g, 1 - frac), los),
            lambda g: unbroadcast(along(g, frac), his),
        ],
    )
    return out


def meshgrid(*args, **kwargs) -> list[Tensor]:
    """N-D coordinate grids from N 1-D tensors (``indexing="xy"`` or ``"ij"``).

    >>> import simdist as tf
    >>> x, y = tf.meshgrid([1, 2, 3], [4, 5])
    >>> y.numpy()
    array([[4, 4, 4],
           [5, 5, 5]], dtype=int32)

    Raises:
        ValueError: ``indexing`` is neither ``"xy"`` nor ``"ij"``.
        TypeError: an unknown keyword argument.
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(
            f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'"
        )
    tensors = [convert_to_tensor(a) for a in args]
    if not tensors:
        return []
    tensors = as_tensors("Meshgrid", *tensors)
    flat = [t._value.reshape(-1) for t in tensors]
    grids = np.meshgrid(*flat, indexing=indexing)
    outputs = []
    for i, (t, grid) in enumerate(zip(tensors, grids, strict=True)):
        out = make_tensor(np.ascontiguousarray(grid), t._dtype)
        axis = i if indexing == "ij" or len(flat) < 2 or i > 1 else 1 - i
        others = tuple(a for a in range(grid.ndim) if a != axis)
        in_shape = t._value.shape
        record("Meshgrid", [t], [out], [lambda g, o=others, s=in_shape: g.sum(axis=o).reshape(s)])
        outputs.append(out)
    return outputs
