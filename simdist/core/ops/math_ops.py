"""Element-wise arithmetic, reductions and matmul, with their gradients.

Each op converts its inputs (:func:`as_tensors`), computes in NumPy in the inputs' dtype,
wraps the result, and records one vjp per input. Broadcasting follows NumPy (as TF does);
gradients of broadcast inputs are summed back to the input's shape.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.ops._helpers import as_tensors, unbroadcast
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["add", "subtract", "multiply", "divide", "negative", "matmul", "reduce_sum"]


def _broadcast_check(op: str, a: np.ndarray, b: np.ndarray) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise errors.InvalidArgumentError(
            f"{op}: incompatible shapes {list(a.shape)} and {list(b.shape)}; they must be equal "
            "or broadcastable (each dimension equal, or 1)."
        ) from None


def add(x, y, name=None) -> Tensor:
    """``x + y`` element-wise, with NumPy broadcasting."""
    x, y = as_tensors("AddV2", x, y)
    _broadcast_check("AddV2", x._value, y._value)
    out = make_tensor(x._value + y._value, x.dtype)
    xs, ys = x._value.shape, y._value.shape
    record("AddV2", [x, y], [out], [lambda g: unbroadcast(g, xs), lambda g: unbroadcast(g, ys)])
    return out


def subtract(x, y, name=None) -> Tensor:
    x, y = as_tensors("Sub", x, y)
    _broadcast_check("Sub", x._value, y._value)
    out = make_tensor(x._value - y._value, x.dtype)
    xs, ys = x._value.shape, y._value.shape
    record("Sub", [x, y], [out], [lambda g: unbroadcast(g, xs), lambda g: -unbroadcast(g, ys)])
    return out


def multiply(x, y, name=None) -> Tensor:
    x, y = as_tensors("Mul", x, y)
    _broadcast_check("Mul", x._value, y._value)
    xv, yv = x._value, y._value
    out = make_tensor(xv * yv, x.dtype)
    record(
        "Mul",
        [x, y],
        [out],
        [lambda g: unbroadcast(g * yv, xv.shape), lambda g: unbroadcast(g * xv, yv.shape)],
    )
    return out


def divide(x, y, name=None) -> Tensor:
    """``x / y``; integer inputs give float64 (int32: float64), as TF's truediv does."""
    x, y = as_tensors("RealDiv", x, y)
    _broadcast_check("RealDiv", x._value, y._value)
    xv, yv = x._value, y._value
    if x.dtype.is_integer:
        target = dtypes.float32 if x.dtype.size <= 2 else dtypes.float64
        return make_tensor(xv.astype(target.as_numpy_dtype) / yv.astype(target.as_numpy_dtype))
    out = make_tensor(xv / yv, x.dtype)
    record(
        "RealDiv",
        [x, y],
        [out],
        [
            lambda g: unbroadcast(g / yv, xv.shape),
            lambda g: unbroadcast(-g * xv / (yv * yv), yv.shape),
        ],
    )
    return out


def negative(x, name=None) -> Tensor:
    (x,) = as_tensors("Neg", x)
    out = make_tensor(-x._value, x.dtype)
    record("Neg", [x], [out], [lambda g: -g])
    return out


def matmul(a, b, transpose_a=False, transpose_b=False, name=None) -> Tensor:
    """Matrix product over the last two axes (batched over leading axes).

    Raises:
        InvalidArgumentError: the inner dimensions differ, or a rank below 2.
    """
    a, b = as_tensors("MatMul", a, b)
    av, bv = a._value, b._value
    if av.ndim < 2 or bv.ndim < 2:
        raise errors.InvalidArgumentError(
            f"MatMul needs inputs of rank >= 2, got shapes {list(av.shape)} and "
            f"{list(bv.shape)}; use tf.expand_dims or tf.reshape to add the missing axis."
        )
    am = np.swapaxes(av, -1, -2) if transpose_a else av
    bm = np.swapaxes(bv, -1, -2) if transpose_b else bv
    if am.shape[-1] != bm.shape[-2]:
        raise errors.InvalidArgumentError(
            f"Matrix size-incompatible: In[0]: {list(am.shape)}, In[1]: {list(bm.shape)}; the "
            f"last dimension of the first ({am.shape[-1]}) must equal the second-to-last "
            f"dimension of the second ({bm.shape[-2]})."
        )
    out = make_tensor(np.matmul(am, bm), a.dtype)

    def grad_a(g):
        ga = np.matmul(g, np.swapaxes(bm, -1, -2))
        ga = np.swapaxes(ga, -1, -2) if transpose_a else ga
        return unbroadcast(ga, av.shape)

    def grad_b(g):
        gb = np.matmul(np.swapaxes(am, -1, -2), g)
        gb = np.swapaxes(gb, -1, -2) if transpose_b else gb
        return unbroadcast(gb, bv.shape)

    record("MatMul", [a, b], [out], [grad_a, grad_b])
    return out


def _axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = np.atleast_1d(np.asarray(axis._value if isinstance(axis, Tensor) else axis)).tolist()
    out = []
    for ax in axes:
        if not -ndim <= ax < max(ndim, 1):
            raise errors.InvalidArgumentError(
                f"Invalid reduction dimension {ax} for input with {ndim} dimensions; use an "
                f"axis in [{-ndim}, {ndim})."
            )
        out.append(ax % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Sum over ``axis`` (all axes when ``None``), in the input's dtype."""
    (x,) = as_tensors("Sum", input_tensor)
    xv = x._value
    axes = _axes(axis, xv.ndim)
    out = make_tensor(np.sum(xv, axis=axes, keepdims=keepdims, dtype=xv.dtype), x.dtype)

    def grad(g):
        if not keepdims:
            g = np.expand_dims(g, axes)
        return np.broadcast_to(g, xv.shape)

    record("Sum", [x], [out], [grad])
    return out
