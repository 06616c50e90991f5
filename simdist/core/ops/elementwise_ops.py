"""Element-wise unary math (``exp``, ``log``, ``sqrt``, ``abs``...), with their gradients.

Transcendental ops accept floating inputs only, as TF's kernels do; ``abs``, ``sign``,
``negative``, ``square``, ``reciprocal`` and ``round`` accept integers too. Invalid inputs
(``log(-1)``, ``sqrt(-1)``) give NaN or inf silently, as in TF.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "negative", "abs", "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square",
    "reciprocal", "round", "floor", "ceil",
]  # fmt: skip


def _input(op: str, x, floating: bool) -> Tensor:
    x = convert_to_tensor(x)
    dtype = x._dtype
    if dtype.is_bool or dtype == dtypes.string or (floating and not dtype.is_floating):
        allowed = "half, float, double" if floating else "number types"
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {dtype.name} is not in the list of allowed values: "
            f"{allowed} [Op:{op}]; cast the input with tf.cast(x, tf.float32) first."
        )
    return x


def _unary(op: str, x, forward: Callable, vjp: Callable | None, floating: bool = True) -> Tensor:
    """Apply ``forward`` to ``x``'s array; ``vjp(g, x_array, y_array)`` is its gradient.

    A RaggedTensor maps over its ``flat_values`` and keeps its rows (TF's ragged dispatch)."""
    if getattr(type(x), "_is_ragged", False):
        return x.with_flat_values(_unary(op, x.flat_values, forward, vjp, floating))
    x = _input(op, x, floating)
    xv = x._value
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = make_tensor(forward(xv), x._dtype)
    if vjp is not None:
        yv = out._value

        def grad(g):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return vjp(g, xv, yv)

        record(op, [x], [out], [grad])
    return out


def negative(x, name=None) -> Tensor:
    """``-x`` element-wise."""
    return _unary("Neg", x, np.negative, lambda g, x, y: -g, floating=False)


def abs(x, name=None) -> Tensor:
    """``|x|``; the gradient is ``sign(x)`` (0 at 0)."""
    return _unary("Abs", x, np.abs, lambda g, x, y: g * np.sign(x), floating=False)


def sign(x, name=None) -> Tensor:
    """-1, 0 or 1 by the sign of ``x``; its gradient is zero."""
    return _unary("Sign", x, np.sign, lambda g, x, y: np.zeros_like(g), floating=False)


def exp(x, name=None) -> Tensor:
    """``e ** x``."""
    return _unary("Exp", x, np.exp, lambda g, x, y: g * y)


def log(x, name=None) -> Tensor:
    """Natural logarithm (``-inf`` at 0, NaN below)."""
    return _unary("Log", x, np.log, lambda g, x, y: g / x)


def log1p(x, name=None) -> Tensor:
    """``log(1 + x)``, accurate for small ``x``."""
    return _unary("Log1p", x, np.log1p, lambda g, x, y: g / (1 + x))


def sqrt(x, name=None) -> Tensor:
    """Square root."""
    return _unary("Sqrt", x, np.sqrt, lambda g, x, y: g * 0.5 / y)


def rsqrt(x, name=None) -> Tensor:
    """``1 / sqrt(x)``."""
    return _unary("Rsqrt", x, lambda v: 1 / np.sqrt(v), lambda g, x, y: g * -0.5 * y * y * y)


def square(x, name=None) -> Tensor:
    """``x * x``."""
    return _unary("Square", x, np.square, lambda g, x, y: g * 2 * x, floating=False)


def reciprocal(x, name=None) -> Tensor:
    """``1 / x`` (integer division for integer ``x``, as TF's kernel)."""
    x = _input("Reciprocal", x, floating=False)
    if x._dtype.is_integer:
        if np.any(x._value == 0):
            raise errors.InvalidArgumentError(
                "Integer division by zero [Op:Reciprocal]; the input has a zero element."
            )
        ones = np.ones((), x._value.dtype)
        return make_tensor(np.trunc(ones / x._value).astype(x._value.dtype), x._dtype)
    return _unary("Reciprocal", x, np.reciprocal, lambda g, x, y: -g * y * y)


def round(x, name=None) -> Tensor:
    """Round half to even (banker's rounding), as TF. Not differentiable."""
    return _unary("Round", x, np.round, None, floating=False)


def floor(x, name=None) -> Tensor:
    """Largest integer not greater than ``x``, as a float. Not differentiable."""
    return _unary("Floor", x, np.floor, None)


def ceil(x, name=None) -> Tensor:
    """Smallest integer not less than ``x``, as a float. Not differentiable."""
    return _unary("Ceil", x, np.ceil, None)
