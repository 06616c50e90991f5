"""Binary arithmetic, ``matmul``, ``add_n`` and ``cast``, with their gradients.

Each op converts its inputs (:func:`as_tensors`), computes in NumPy in the inputs' dtype,
wraps the result, and records one vjp per input. Broadcasting follows NumPy (as TF does);
gradients of broadcast inputs are summed back to the input's shape. The element-wise unary
ops, comparisons and reductions live in sibling modules and are re-exported here, so
``math_ops.<name>`` reaches every op of ``tf.math``.
"""

from __future__ import annotations

import functools

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors, unbroadcast
from simdist.core.ops.comparison_ops import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
)
from simdist.core.ops.elementwise_ops import (
    abs,
    ceil,
    exp,
    floor,
    log,
    log1p,
    negative,
    reciprocal,
    round,
    rsqrt,
    sign,
    sqrt,
    square,
)
from simdist.core.ops.reduction_ops import (
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
)
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "pow",
    "maximum", "minimum", "matmul", "add_n", "cast", "saturate_cast", "clip_by_value",
    # re-exported from elementwise_ops, comparison_ops, reduction_ops
    "negative", "abs", "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square",
    "reciprocal", "round", "floor", "ceil",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
    "reduce_all", "reduce_logsumexp", "reduce_variance", "reduce_std", "argmax", "argmin",
]  # fmt: skip


def _shape_error(op: str, xv: np.ndarray, yv: np.ndarray) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(
        f"Incompatible shapes: {list(xv.shape)} vs. {list(yv.shape)} [Op:{op}]; the shapes "
        "must be equal or broadcastable (each trailing dimension equal, or 1)."
    )


def _numeric(op: str, *tensors: Tensor) -> None:
    """Arithmetic is defined on numbers only (not bool, not string), as TF's kernels are."""
    dtype = tensors[0]._dtype
    if dtype.is_bool or dtype == dtypes.string:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {dtype.name} is not in the list of allowed values for "
            f"[Op:{op}]; cast the input to a number type with tf.cast first."
        )


def _binary(op: str, x, y) -> tuple[Tensor, Tensor]:
    x, y = as_tensors(op, x, y)
    _numeric(op, x)
    return x, y


def add(x, y, name=None) -> Tensor:
    """``x + y`` element-wise, with NumPy broadcasting (strings concatenate, as in TF)."""
    x, y = as_tensors("AddV2", x, y)
    if x._dtype.is_bool:
        _numeric("AddV2", x)
    xv, yv = x._value, y._value
    try:
        out = make_tensor(xv + yv, x._dtype)
    except ValueError:
        raise _shape_error("AddV2", xv, yv) from None
    xs, ys = xv.shape, yv.shape
    record("AddV2", [x, y], [out], [lambda g: unbroadcast(g, xs), lambda g: unbroadcast(g, ys)])
    return out


def subtract(x, y, name=None) -> Tensor:
    """``x - y`` element-wise, with broadcasting."""
    x, y = _binary("Sub", x, y)
    xv, yv = x._value, y._value
    try:
        out = make_tensor(xv - yv, x._dtype)
    except ValueError:
        raise _shape_error("Sub", xv, yv) from None
    xs, ys = xv.shape, yv.shape
    record("Sub", [x, y], [out], [lambda g: unbroadcast(g, xs), lambda g: -unbroadcast(g, ys)])
    return out


def multiply(x, y, name=None) -> Tensor:
    """``x * y`` element-wise, with broadcasting."""
    x, y = _binary("Mul", x, y)
    xv, yv = x._value, y._value
    try:
        out = make_tensor(xv * yv, x._dtype)
    except ValueError:
        raise _shape_error("Mul", xv, yv) from None
    record(
        "Mul",
        [x, y],
        [out],
        [lambda g: unbroadcast(g * yv, xv.shape), lambda g: unbroadcast(g * xv, yv.shape)],
    )
    return out


def divide(x, y, name=None) -> Tensor:
    """``x / y`` (true division). Integer inputs give floats, as TF's ``truediv`` does.

    int8, int16, uint8 and uint16 divide in float32; int32 and int64 in float64.
    """
    x, y = _binary("RealDiv", x, y)
    xv, yv = x._value, y._value
    if x._dtype.is_integer:
        target = np.float32 if x._dtype.size <= 2 else np.float64
        xv, yv = xv.astype(target), yv.astype(target)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            out = make_tensor(xv / yv)
        except ValueError:
            raise _shape_error("RealDiv", xv, yv) from None
    if not x._dtype.is_integer:

        def grad_y(g):
            with np.errstate(divide="ignore", invalid="ignore"):
                return unbroadcast(-g * xv / (yv * yv), yv.shape)

        def grad_x(g):
            with np.errstate(divide="ignore", invalid="ignore"):
                return unbroadcast(g / yv, xv.shape)

        record("RealDiv", [x, y], [out], [grad_x, grad_y])
    return out


truediv = divide


def _check_int_divisor(op: str, x: Tensor, yv: np.ndarray) -> None:
    if x._dtype.is_integer and np.any(yv == 0):
        raise errors.InvalidArgumentError(
            f"Integer division by zero [Op:{op}]; make sure the divisor has no zero element."
        )


def floordiv(x, y, name=None) -> Tensor:
    """``x // y``: division rounded toward negative infinity. Not differentiable (as TF)."""
    x, y = _binary("FloorDiv", x, y)
    xv, yv = x._value, y._value
    _check_int_divisor("FloorDiv", x, yv)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            result = np.floor_divide(xv, yv)
        except ValueError:
            raise _shape_error("FloorDiv", xv, yv) from None
    return make_tensor(result, x._dtype)


def floormod(x, y, name=None) -> Tensor:
    """``x % y`` with the sign of ``y`` (Python's rule, and TF's ``floormod``)."""
    x, y = _binary("FloorMod", x, y)
    xv, yv = x._value, y._value
    _check_int_divisor("FloorMod", x, yv)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            out = make_tensor(np.mod(xv, yv), x._dtype)
        except ValueError:
            raise _shape_error("FloorMod", xv, yv) from None

    def grad_y(g):
        with np.errstate(divide="ignore", invalid="ignore"):
            return unbroadcast(-g * np.floor_divide(xv, yv), yv.shape)

    record("FloorMod", [x, y], [out], [lambda g: unbroadcast(g, xv.shape), grad_y])
    return out


def pow(x, y, name=None) -> Tensor:
    """``x ** y`` element-wise.

    Raises:
        InvalidArgumentError: an integer base raised to a negative integer power.
    """
    x, y = _binary("Pow", x, y)
    xv, yv = x._value, y._value
    if x._dtype.is_integer and np.any(yv < 0):
        raise errors.InvalidArgumentError(
            "Integers to negative integer powers are not allowed [Op:Pow]; cast the base to a "
            "float type first."
        )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        try:
            out = make_tensor(np.power(xv, yv), x._dtype)
        except ValueError:
            raise _shape_error("Pow", xv, yv) from None
    zv = out._value

    def grad_x(g):
        with np.errstate(divide="ignore", invalid="ignore"):
            return unbroadcast(g * yv * np.power(xv, yv - 1), xv.shape)

    def grad_y(g):
        with np.errstate(divide="ignore", invalid="ignore"):
            log_x = np.where(xv > 0, np.log(np.where(xv > 0, xv, 1)), 0).astype(xv.dtype)
        return unbroadcast(g * zv * log_x, yv.shape)

    record("Pow", [x, y], [out], [grad_x, grad_y])
    return out


def _max_min(op: str, x, y, pick, x_wins) -> Tensor:
    x, y = _binary(op, x, y)
    xv, yv = x._value, y._value
    try:
        out = make_tensor(pick(xv, yv), x._dtype)
    except ValueError:
        raise _shape_error(op, xv, yv) from None

    # TF's rule: the whole gradient goes to x where x wins or ties, to y elsewhere.
    def grad_x(g):
        return unbroadcast(np.where(x_wins(xv, yv), g, 0).astype(g.dtype), xv.shape)

    def grad_y(g):
        return unbroadcast(np.where(x_wins(xv, yv), 0, g).astype(g.dtype), yv.shape)

    record(op, [x, y], [out], [grad_x, grad_y])
    return out


def maximum(x, y, name=None) -> Tensor:
    """The larger of ``x`` and ``y`` element-wise; on ties the gradient goes to ``x``."""
    return _max_min("Maximum", x, y, np.maximum, np.greater_equal)


def minimum(x, y, name=None) -> Tensor:
    """The smaller of ``x`` and ``y`` element-wise; on ties the gradient goes to ``x``."""
    return _max_min("Minimum", x, y, np.minimum, np.less_equal)


def clip_by_value(t, clip_value_min, clip_value_max, name=None) -> Tensor:
    """``t`` with values below ``clip_value_min`` / above ``clip_value_max`` replaced.

    The gradient passes to ``t`` where ``min <= t <= max``, and to the bound elsewhere.

    Raises:
        InvalidArgumentError: the bounds do not broadcast to ``t``'s shape.
    """
    t, lo, hi = as_tensors("ClipByValue", t, clip_value_min, clip_value_max)
    _numeric("ClipByValue", t)
    tv, lov, hiv = t._value, lo._value, hi._value
    try:
        shape = np.broadcast_shapes(tv.shape, lov.shape, hiv.shape)
    except ValueError:
        shape = None
    if shape != tv.shape:
        raise errors.InvalidArgumentError(
            f"clip_value_min {list(lov.shape)} and clip_value_max {list(hiv.shape)} must "
            f"broadcast to the shape of t {list(tv.shape)} without changing it."
        )
    # As TF: the upper bound first, then the lower, so min > max gives min everywhere.
    out = make_tensor(np.maximum(np.minimum(tv, hiv), lov), t._dtype)
    below, above = tv < lov, tv > hiv

    def grad_t(g):
        return np.where(below | above, 0, g).astype(g.dtype)

    def grad_lo(g):
        return unbroadcast(np.where(below, g, 0).astype(g.dtype), lov.shape)

    def grad_hi(g):
        return unbroadcast(np.where(above, g, 0).astype(g.dtype), hiv.shape)

    record("ClipByValue", [t, lo, hi], [out], [grad_t, grad_lo, grad_hi])
    return out


def add_n(inputs, name=None) -> Tensor:
    """The element-wise sum of a list of tensors of one shape and dtype.

    Raises:
        ValueError: ``inputs`` is empty.
        InvalidArgumentError: the inputs' shapes or dtypes differ.
    """
    if isinstance(inputs, Tensor) or hasattr(inputs, "_to_tensor"):
        inputs = [inputs]
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors with the same shape.")
    tensors = as_tensors("AddN", *inputs)
    _numeric("AddN", tensors[0])
    first = tensors[0]._value.shape
    for i, t in enumerate(tensors):
        if t._value.shape != first:
            raise errors.InvalidArgumentError(
                f"AddN: inputs must have the same shape; input 0 is {list(first)}, input {i} "
                f"is {list(t._value.shape)}."
            )
    total = tensors[0]._value.copy()
    for t in tensors[1:]:
        total += t._value  # in list order: deterministic rounding
    out = make_tensor(total, tensors[0]._dtype)
    record("AddN", tensors, [out], [lambda g: g] * len(tensors))
    return out


def cast(x, dtype, name=None) -> Tensor:
    """``x`` converted to ``dtype``; float to int truncates toward zero (as TF).

    Only float-to-float casts carry a gradient (the upstream gradient, cast back). A
    RaggedTensor casts its ``flat_values`` and keeps its rows.
    """
    dtype = dtypes.as_dtype(dtype)
    if getattr(type(x), "_is_ragged", False):
        return x.with_flat_values(cast(x.flat_values, dtype))
    x = convert_to_tensor(x)
    if x._dtype == dtype:
        return x
    if dtypes.string in (x._dtype, dtype):
        raise errors.UnimplementedError(
            f"Cast {x._dtype.name} to {dtype.name} is not supported; use tf.strings functions "
            "to convert between strings and numbers."
        )
    xv = x._value
    with np.errstate(invalid="ignore", over="ignore"):
        out = make_tensor(xv.astype(dtype._np), dtype)
    if x._dtype.is_floating and dtype.is_floating:
        src = xv.dtype
        record("Cast", [x], [out], [lambda g: g.astype(src)])
    return out


def _bound_in(bound, np_dtype) -> np.ndarray:
    """``bound`` in ``np_dtype``, rounded toward zero where it is not representable there
    (int32's max is 2**31 - 1, which float32 would round up to 2**31, out of range)."""
    value = np.asarray(bound).astype(np_dtype)
    exact = int(bound) if float(bound).is_integer() else None
    if exact is not None and np.isfinite(value):
        rounded = int(value)
        if rounded > exact > 0 or rounded < exact < 0:  # rounded away from zero: step back
            value = np.nextafter(value, np_dtype.type(0))
    return value


def saturate_cast(value, dtype, name=None) -> Tensor:
    """``value`` cast to ``dtype`` with values outside ``dtype``'s range clipped to it first
    (as TF: no wrap-around, no undefined float-to-int overflow)."""
    dtype = dtypes.as_dtype(dtype)
    x = convert_to_tensor(value)
    if x._dtype.is_bool or dtype.is_bool or dtypes.string in (x._dtype, dtype):
        raise errors.InvalidArgumentError(
            f"saturate_cast supports numeric dtypes, got {x._dtype.name} to {dtype.name}."
        )
    target = (np.finfo if dtype.is_floating else np.iinfo)(dtype._np)
    source = (np.finfo if x._dtype.is_floating else np.iinfo)(x._dtype._np)
    if source.min < target.min:
        x = maximum(x, _bound_in(target.min, x._dtype._np))
    if source.max > target.max:
        x = minimum(x, _bound_in(target.max, x._dtype._np))
    return cast(x, dtype)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None) -> Tensor:
    """Matrix product over the last two axes (batched over leading axes).

    Raises:
        InvalidArgumentError: the inner dimensions differ, or a rank below 2.
    """
    a, b = as_tensors("MatMul", a, b)
    _numeric("MatMul", a)
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
    try:
        out = make_tensor(np.matmul(am, bm), a._dtype)
    except ValueError:
        raise errors.InvalidArgumentError(
            f"MatMul: batch dimensions {list(av.shape[:-2])} and {list(bv.shape[:-2])} do not "
            "broadcast."
        ) from None

    def grad_a(g):
        if transpose_a:  # a was used transposed: d(a) = (g @ b^T)^T = b @ g^T
            return unbroadcast(np.matmul(bm, np.swapaxes(g, -1, -2)), av.shape)
        return unbroadcast(np.matmul(g, np.swapaxes(bm, -1, -2)), av.shape)

    def grad_b(g):
        if transpose_b:
            return unbroadcast(np.matmul(np.swapaxes(g, -1, -2), am), bv.shape)
        return unbroadcast(np.matmul(np.swapaxes(am, -1, -2), g), bv.shape)

    record("MatMul", [a, b], [out], [grad_a, grad_b])
    return out


def _ragged_dispatch(fn):
    """``fn(x, y)`` where either side is a RaggedTensor: over its flat values, rows kept (TF's
    ragged dispatch; ``ragged_ops.binary`` says which operands combine)."""

    @functools.wraps(fn)
    def dispatching(x, y, name=None):
        if getattr(type(x), "_is_ragged", False) or getattr(type(y), "_is_ragged", False):
            from simdist.core.ragged import ragged_ops

            return ragged_ops.binary(fn, x, y, fn.__name__)
        return fn(x, y, name)

    return dispatching


add = _ragged_dispatch(add)
subtract = _ragged_dispatch(subtract)
multiply = _ragged_dispatch(multiply)
divide = truediv = _ragged_dispatch(divide)
floordiv = _ragged_dispatch(floordiv)
floormod = _ragged_dispatch(floormod)
pow = _ragged_dispatch(pow)
maximum = _ragged_dispatch(maximum)
minimum = _ragged_dispatch(minimum)
