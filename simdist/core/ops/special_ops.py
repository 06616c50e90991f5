"""Special functions and float tests: ``erf``, ``erfc``, ``lgamma``, ``digamma``,
``is_nan``/``is_inf``/``is_finite``, ``polyval``.

NumPy has no ``erf`` or ``lgamma``: they are Python's ``math.erf``, ``math.erfc`` and
``math.lgamma`` applied element by element in float64, then rounded to the input's dtype
(correctly rounded for float32, within an ulp or two of TF's kernels). ``lgamma`` is
``+inf`` at the poles (0, -1, -2, ...), as TF's. ``digamma`` (lgamma's derivative) is
computed here: the reflection formula below 0.5, the recurrence ``psi(x) = psi(x + 1) - 1/x``
up to 10, then the asymptotic series; NaN at the poles, as TF's.

Gradients: ``erf' = 2/sqrt(pi) exp(-x^2)``, ``erfc' = -erf'``, ``lgamma' = digamma``,
``digamma' = trigamma`` (``polygamma(1, x)``, by the same recurrence, reflection and
series). ``polyval`` is built from ``multiply`` and ``add`` (Horner's rule), so its gradient
follows from theirs.
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops
from simdist.core.ops.elementwise_ops import _input, _unary
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "erf", "erfc", "lgamma", "digamma", "is_nan", "is_inf", "is_finite", "polyval",
]  # fmt: skip

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0, -1, -2, ...
        return math.inf


def _elementwise(fn, values: np.ndarray) -> np.ndarray:
    """``fn`` (a float -> float of Python's math) on every element, in float64."""
    flat = [fn(v) for v in values.astype(np.float64).reshape(-1).tolist()]
    return np.asarray(flat, np.float64).reshape(values.shape).astype(values.dtype)


def _digamma(values: np.ndarray) -> np.ndarray:
    x = values.astype(np.float64)
    out = np.empty_like(x)
    for i, v in enumerate(x.reshape(-1).tolist()):
        out.reshape(-1)[i] = _digamma_scalar(v)
    return out.astype(values.dtype)


# psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x^2k): the B_2k / 2k for k = 1..7
_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_scalar(v: float) -> float:
    if math.isnan(v) or (v <= 0 and v == math.floor(v)):
        return math.nan
    if v == math.inf:
        return math.inf
    if v < 0.5:  # reflection: psi(1 - x) - psi(x) = pi cot(pi x)
        return _digamma_scalar(1.0 - v) - math.pi / math.tan(math.pi * v)
    shift = 0.0
    while v < 10.0:
        shift -= 1.0 / v
        v += 1.0
    inv2 = 1.0 / (v * v)
    series = 0.0
    for coefficient in reversed(_ASYMPTOTIC):  # Horner's rule in 1 / v^2
        series = (series + coefficient) * inv2
    return shift + math.log(v) - 0.5 / v - series


# psi'(x) ~ 1/x + 1/(2x^2) + sum B_2k / x^(2k+1): the B_2k for k = 1..7
_TRIGAMMA_ASYMPTOTIC = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _trigamma_scalar(v: float) -> float:
    if math.isnan(v) or (v <= 0 and v == math.floor(v)):
        return math.nan
    if v == math.inf:
        return 0.0
    if v < 0.5:  # reflection: psi'(1 - x) + psi'(x) = pi^2 / sin^2(pi x)
        return (math.pi / math.sin(math.pi * v)) ** 2 - _trigamma_scalar(1.0 - v)
    shift = 0.0
    while v < 10.0:
        shift += 1.0 / (v * v)
        v += 1.0
    inv2 = 1.0 / (v * v)
    series = 0.0
    for coefficient in reversed(_TRIGAMMA_ASYMPTOTIC):
        series = (series + coefficient) * inv2
    return shift + 1.0 / v + 0.5 * inv2 + series / v


def _trigamma(values: np.ndarray) -> np.ndarray:
    flat = [_trigamma_scalar(v) for v in values.astype(np.float64).reshape(-1).tolist()]
    return np.asarray(flat, np.float64).reshape(values.shape).astype(values.dtype)


def erf(x, name=None) -> Tensor:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt`` (float inputs).

    >>> import simdist as tf
    >>> round(float(tf.math.erf(1.0)), 6)
    0.842701
    """
    return _unary(
        "Erf",
        x,
        lambda v: _elementwise(math.erf, v),
        lambda g, x, y: g * (_TWO_OVER_SQRT_PI * np.exp(-x * x)).astype(x.dtype),
    )


def erfc(x, name=None) -> Tensor:
    """``1 - erf(x)``, accurate where ``erf(x)`` is close to 1."""
    return _unary(
        "Erfc",
        x,
        lambda v: _elementwise(math.erfc, v),
        lambda g, x, y: g * (-_TWO_OVER_SQRT_PI * np.exp(-x * x)).astype(x.dtype),
    )


def lgamma(x, name=None) -> Tensor:
    """``log(|Gamma(x)|)`` (float inputs); ``+inf`` at 0, -1, -2, ...; gradient ``digamma``."""
    return _unary(
        "Lgamma", x, lambda v: _elementwise(_lgamma_scalar, v), lambda g, x, y: g * _digamma(x)
    )


def digamma(x, name=None) -> Tensor:
    """``d/dx lgamma(x)`` (float inputs); NaN at 0, -1, -2, ...; gradient ``polygamma(1, x)``."""
    return _unary("Digamma", x, _digamma, lambda g, x, y: g * _trigamma(x))


def _test(op: str, x, fn) -> Tensor:
    t = _input(op, x, floating=True)
    return make_tensor(fn(t._value))


def is_nan(x, name=None) -> Tensor:
    """Where ``x`` is NaN (bool; float inputs only, as TF)."""
    return _test("IsNan", x, np.isnan)


def is_inf(x, name=None) -> Tensor:
    """Where ``x`` is +inf or -inf (bool; float inputs only)."""
    return _test("IsInf", x, np.isinf)


def is_finite(x, name=None) -> Tensor:
    """Where ``x`` is neither NaN nor infinite (bool; float inputs only)."""
    return _test("IsFinite", x, np.isfinite)


def polyval(coeffs, x, name=None) -> Tensor:
    """``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule (element-wise when the
    coefficients and ``x`` are tensors); an empty list gives zeros shaped like ``x``.

    >>> import simdist as tf
    >>> float(tf.math.polyval([1., 2., 3.], 2.))
    11.0

    Raises:
        ValueError: ``coeffs`` is not a list.
    """
    if not isinstance(coeffs, list):
        raise ValueError(
            f"Argument coeffs must be list type. Received type {type(coeffs)}; pass the "
            "coefficients as a Python list (highest power first)."
        )
    x = convert_to_tensor(x)
    if not coeffs:
        return make_tensor(np.zeros_like(x._value), x._dtype)
    total = convert_to_tensor(coeffs[0], dtype=x._dtype)
    for c in coeffs[1:]:
        total = math_ops.add(math_ops.multiply(total, x), c)
    return total
