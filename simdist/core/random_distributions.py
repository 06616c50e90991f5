"""``tf.random.poisson``, ``tf.random.gamma``, their stateless forms, and stateless seeds
(``tf.random.experimental.stateless_split``, ``stateless_fold_in``).

The draws follow :mod:`simdist.core.random`'s seed rules (one generator per op call, keyed
by the global seed, the op seed and a call counter; the stateless forms by ``seed=[a, b]``
alone); the numbers are NumPy's Poisson and Marsaglia-Tsang gamma samplers, not TF's
kernels. The output shape is ``shape + broadcast(parameters).shape``, as in TF.

``gamma`` is differentiable, as TF's is: a sample ``x = g / beta`` with ``g ~ Gamma(alpha,
1)`` has ``dx/dbeta = -x / beta`` and, holding the sample's quantile fixed (implicit
reparameterisation), ``dg/dalpha = -(dP(alpha, g)/dalpha) / p(g; alpha)``, with ``P`` the
regularised lower incomplete gamma function and ``p`` the density. simdist evaluates ``P``
by its series (``g < alpha + 1``) or continued fraction, and its derivative in ``alpha`` by
a central difference in float64. ``poisson`` has no gradient: as in TF, asking for one
raises ``LookupError``.

``stateless_categorical`` is ``categorical`` keyed by its seed alone.
``stateless_split(seed, num)`` (also ``tf.random.split``) derives ``num`` new seeds from
one; ``stateless_fold_in(seed, data)`` (also ``tf.random.fold_in``) one seed from a seed
and an integer; both pure functions of their inputs (simdist's own values: TF's differ),
int32 or int64 like the seed.
"""

from __future__ import annotations

import math

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import unbroadcast
from simdist.core.random import _generator, _shape, _stateless_rng, draw
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "poisson", "gamma", "stateless_poisson", "stateless_gamma", "stateless_split",
    "stateless_fold_in", "stateless_categorical", "split", "fold_in",
]  # fmt: skip

_POISSON_DTYPES = ("float16", "float32", "float64", "int32", "int64")
_SPLIT_DOMAIN = 2  # a tag of its own: derived seeds never replay another op's stream


def _poisson(rng, shape, lam, dtype, op: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if dtype.name not in _POISSON_DTYPES:
        raise errors.InvalidArgumentError(
            f"Value for attr 'dtype' of {dtype.name} is not in the list of allowed values: "
            f"half, float, double, int32, int64 [Op:{op}]."
        )
    rate = convert_to_tensor(lam)
    rv = rate._value.astype(np.float64)
    out_shape = _shape(shape) + rv.shape
    counts = rng.poisson(np.maximum(np.nan_to_num(rv), 0.0), size=out_shape)
    out = make_tensor(counts.astype(dtype._np), dtype)

    def refuse(g):
        raise LookupError(f"gradient registry has no entry for: {op}")

    record(op, [rate], [out], [refuse])
    return out


def poisson(shape, lam, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Poisson counts with rates ``lam``, shaped ``shape + lam.shape`` (a rate <= 0 gives 0).

    Raises:
        InvalidArgumentError: a ``dtype`` other than a float, int32 or int64.
    """
    return _poisson(draw(seed), shape, lam, dtype, "RandomPoissonV2")


def stateless_poisson(shape, seed, lam, dtype=dtypes.int32, name=None) -> Tensor:
    """``poisson`` as a pure function of ``seed=[a, b]``, shaped ``shape`` (``lam`` must
    broadcast to it, as in TF)."""
    rng = _stateless_rng(seed)
    dims = _shape(shape)
    rate = convert_to_tensor(lam)
    rate_b = np.broadcast_to(rate._value, dims)
    return _poisson(rng, [], make_tensor(rate_b, rate._dtype), dtype, "StatelessRandomPoisson")


# --- gamma ------------------------------------------------------------------------------
def _lower_regularized_gamma(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) in float64, element-wise (series below a + 1, continued fraction above).

    Each element is evaluated by the one expansion that converges for it, so neither loop
    runs to its cap on elements it was never meant for.
    """
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.zeros(a.shape, np.float64)
    unknown = np.isnan(a) | np.isnan(x)
    out[unknown] = np.nan
    positive = (x > 0) & ~unknown
    below = positive & (x < a + 1.0)
    above = positive & ~below
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if below.any():
            out[below] = _gamma_series(a[below], x[below])
        if above.any():
            out[above] = 1.0 - _gamma_continued_fraction(a[above], x[above])
    return out


def _log_front(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    return a * np.log(x) - x - np.array([math.lgamma(v) for v in a.ravel()]).reshape(a.shape)


def _gamma_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x^a e^-x / Gamma(a) * sum x^n / (a (a+1) ... (a+n)), for x < a + 1."""
    term = 1.0 / a
    total = term.copy()
    for n in range(1, 300):
        term = term * x / (a + n)
        total = total + term
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return total * np.exp(_log_front(a, x))


def _gamma_continued_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = 1 - P(a, x) by Lentz's continued fraction, for x >= a + 1."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full_like(x, 1.0 / tiny)
    d = 1.0 / np.where(b == 0, tiny, b)
    h = d.copy()
    for i in range(1, 300):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / np.where(np.abs(c) < tiny, tiny, c)
        h = h * d * c
        if not np.any(np.abs(d * c - 1.0) > 1e-16):
            break
    return np.exp(_log_front(a, x)) * h


def _standard_gamma_grad(alpha: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """d sample / d alpha of a Gamma(alpha, 1) sample, by implicit differentiation of P."""
    a, g = alpha.astype(np.float64), np.maximum(sample.astype(np.float64), 1e-300)
    step = 1e-5 * np.maximum(a, 1e-3)
    dp_da = (_lower_regularized_gamma(a + step, g) - _lower_regularized_gamma(a - step, g)) / (
        2 * step
    )
    log_gamma_a = np.vectorize(math.lgamma, otypes=[np.float64])(a)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        density = np.exp((a - 1) * np.log(g) - g - log_gamma_a)
        return np.nan_to_num(-dp_da / density)


def _gamma(rng, shape, alpha, beta, dtype, op: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"Cannot convert {alpha!r} to EagerTensor of dtype {dtype.name}")
    a = convert_to_tensor(alpha, dtype=dtype)
    b = None if beta is None else convert_to_tensor(beta, dtype=dtype)
    av = a._value.astype(np.float64)
    bv = np.ones((), np.float64) if b is None else b._value.astype(np.float64)
    params = np.broadcast_shapes(av.shape, bv.shape)
    out_shape = _shape(shape) + params
    a_b = np.broadcast_to(av, out_shape)
    with np.errstate(invalid="ignore"):
        standard = rng.standard_gamma(np.where(a_b > 0, a_b, 1.0), size=out_shape)
    standard = np.where(a_b > 0, standard, np.nan)
    tiny = np.finfo(dtype._np).tiny  # TF's floor: a sample never rounds to 0
    standard_d = np.maximum(standard, tiny).astype(dtype._np)
    out = make_tensor((standard / bv).astype(dtype._np), dtype)
    if np.any(a_b == 0):
        out = make_tensor(np.where(a_b == 0, tiny, out._value).astype(dtype._np), dtype)
    lead = len(out_shape) - len(params)

    def to_param(g, shape_of):
        summed = g.sum(axis=tuple(range(lead))) if lead else g
        return unbroadcast(summed, shape_of)

    def grad_alpha(g):
        d = _standard_gamma_grad(a_b, standard_d) / bv
        return to_param((g * d).astype(g.dtype), av.shape)

    inputs, vjps = [a], [grad_alpha]
    if b is not None:
        yv = out._value
        inputs.append(b)
        vjps.append(lambda g: to_param((-g * yv / bv.astype(g.dtype)).astype(g.dtype), bv.shape))
    record(op, inputs, [out], vjps)
    return out


def gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Gamma samples with shapes ``alpha`` and rates ``beta`` (default 1), shaped
    ``shape + broadcast(alpha, beta).shape``; differentiable in ``alpha`` and ``beta``.

    ``alpha <= 0`` gives NaN (below 0) or the dtype's smallest normal number (at 0), as TF.

    Raises:
        TypeError: an integer ``dtype``.
    """
    return _gamma(draw(seed), shape, alpha, beta, dtype, "RandomGamma")


def stateless_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None) -> Tensor:
    """``gamma`` as a pure function of ``seed=[a, b]``, shaped ``shape`` (the parameters
    must broadcast to it, as in TF)."""
    rng = _stateless_rng(seed)
    dims = _shape(shape)
    a = convert_to_tensor(alpha, dtype=dtype)
    a_b = make_tensor(np.broadcast_to(a._value, dims), a._dtype)
    return _gamma(rng, [], a_b, beta, dtype, "StatelessRandomGammaV2")


# --- seeds ------------------------------------------------------------------------------
def _seed_pair(seed) -> Tensor:
    s = convert_to_tensor(seed)
    if s._value.shape != (2,):
        raise errors.InvalidArgumentError(
            f"seed must have shape [2], not {list(s._value.shape)} "
            "[Op:StatelessRandomGetKeyCounter]"
        )
    if not s._dtype.is_integer:
        raise TypeError(f"seed must hold integers, got {s._dtype.name}.")
    return s


def _derived(words: list[int], count: int, dtype: dtypes.DType) -> np.ndarray:
    info = np.iinfo(dtype._np)
    rng = _generator(_SPLIT_DOMAIN, *words)
    return rng.integers(info.min, info.max, size=(count, 2), endpoint=True, dtype=dtype._np)


def stateless_split(seed, num=2, alg="auto_select") -> Tensor:
    """``num`` new seeds (``[num, 2]``) derived from ``seed=[a, b]``, for stateless ops.

    Raises:
        InvalidArgumentError: ``seed`` is not of shape [2].
    """
    s = _seed_pair(seed)
    words = [int(v) for v in s._value]
    return make_tensor(_derived(words, int(num), s._dtype), s._dtype)


def stateless_fold_in(seed, data, alg="auto_select") -> Tensor:
    """A new seed from ``seed=[a, b]`` and the integer ``data`` (a step, a replica id).

    Raises:
        InvalidArgumentError: ``seed`` is not of shape [2].
    """
    s = _seed_pair(seed)
    words = [int(v) for v in s._value] + [int(convert_to_tensor(data)._value), 1]
    return make_tensor(_derived(words, 1, s._dtype)[0], s._dtype)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None) -> Tensor:
    """``tf.random.categorical`` as a pure function of ``seed=[a, b]``: class indices
    ``[batch_size, num_samples]`` drawn from unnormalised log-probabilities.

    Raises:
        InvalidArgumentError: ``logits`` is not a matrix, or ``seed`` not of shape [2].
    """
    x = convert_to_tensor(logits)
    dtype = dtypes.as_dtype(dtype)
    lv = x._value
    if lv.ndim != 2:
        raise errors.InvalidArgumentError(
            f"logits should be a matrix, got shape {list(lv.shape)} [Op:StatelessMultinomial]"
        )
    count = int(convert_to_tensor(num_samples)._value)
    gumbel = _stateless_rng(seed).gumbel(size=(lv.shape[0], count, lv.shape[1]))
    picks = np.argmax(lv[:, None, :].astype(np.float64) + gumbel, axis=-1)
    return make_tensor(picks.astype(dtype._np), dtype)


split = stateless_split  # tf.random.split is tf.random.experimental.stateless_split
fold_in = stateless_fold_in  # and tf.random.fold_in is stateless_fold_in
