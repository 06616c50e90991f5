"""Reductions (``reduce_sum``, ``reduce_mean``, ``reduce_max``...) and ``argmax``/``argmin``.

``axis`` may be ``None`` (every axis), an int, a list of ints, negative ints, or an integer
tensor; ``keepdims`` keeps reduced axes with length 1. As TF: an integer ``reduce_mean``
stays integer (the quotient truncates toward zero), and the gradient of ``reduce_max`` /
``reduce_min`` is split equally among the elements that tie for the extreme.
"""

from __future__ import annotations

import warnings

import numpy as np

from simdist import errors
from simdist.core import dtypes, step_hooks
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
    "reduce_all", "reduce_logsumexp", "reduce_variance", "reduce_std", "argmax", "argmin",
]  # fmt: skip


def _axes(axis, ndim: int) -> tuple[int, ...]:
    """Normalise ``axis`` to a sorted tuple of non-negative axes of an ``ndim`` input."""
    if axis is None:
        return tuple(range(ndim))
    try:
        raw = np.asarray(axis._value if isinstance(axis, Tensor) else axis)
    except ValueError:  # a ragged list of lists
        raw = np.asarray([None], dtype=object)
    if raw.ndim > 1:
        raise errors.InvalidArgumentError(
            f"Invalid reduction arguments: Axes must be at most rank 1, got {axis!r} of shape "
            f"{list(raw.shape)}; pass an int or a flat list of ints."
        )
    if raw.dtype.kind not in "iu" and raw.size:
        raise errors.InvalidArgumentError(
            f"Value for attr 'Tidx' of {raw.dtype} is not in the list of allowed values: int32, "
            f"int64; axis must be an int, a list of ints or an int tensor, got {axis!r}."
        )
    out = []
    for ax in raw.reshape(-1).tolist():
        if not -ndim <= ax < ndim:
            raise errors.InvalidArgumentError(
                f"Invalid reduction dimension {ax} for input with {ndim} dimensions; use an "
                f"axis in [{-ndim}, {ndim})."
            )
        if ax % ndim in out:
            raise errors.InvalidArgumentError(
                f"Invalid reduction arguments: Axes contains duplicate dimension: {ax % ndim} "
                f"(axis={raw.reshape(-1).tolist()}); name each axis once."
            )
        out.append(ax % ndim)
    return tuple(sorted(out))


def _input(op: str, x, kinds: str) -> Tensor:
    x = convert_to_tensor(x)
    if x._value.dtype.kind not in kinds:
        wanted = "bool" if kinds == "b" else "a number type"
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values "
            f"[Op:{op}]; {op} needs {wanted} input."
        )
    return x


def _dropped(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _expand(g: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """Give an upstream gradient back the reduced axes (as length-1 axes)."""
    return g if keepdims else np.expand_dims(g, axes)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Sum over ``axis`` (all axes when ``None``), in the input's dtype."""
    if getattr(type(input_tensor), "_is_ragged", False):
        return input_tensor._reduce("sum", axis, keepdims)
    step_hooks.note("reduce", op="reduce_sum")
    x = _input("Sum", input_tensor, "iuf")
    xv = x._value
    axes = _axes(axis, xv.ndim)
    out = make_tensor(np.sum(xv, axis=axes, keepdims=keepdims, dtype=xv.dtype), x._dtype)
    record("Sum", [x], [out], [lambda g: np.broadcast_to(_expand(g, axes, keepdims), xv.shape)])
    return out


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Mean over ``axis``; for integer inputs the sum divided with truncation toward zero."""
    if getattr(type(input_tensor), "_is_ragged", False):
        return input_tensor._reduce("mean", axis, keepdims)
    step_hooks.note("reduce", op="reduce_mean")
    x = _input("Mean", input_tensor, "iuf")
    xv = x._value
    axes = _axes(axis, xv.ndim)
    count = int(np.prod([xv.shape[a] for a in axes], dtype=np.int64))
    if x._dtype.is_integer:
        total = np.sum(xv, axis=axes, keepdims=keepdims, dtype=xv.dtype)
        if count == 0:  # TF 2.21 (CPU): the integer mean of nothing is 0
            return make_tensor(np.zeros_like(total), x._dtype)
        quotient = (np.abs(total) // count) * np.sign(total)
        return make_tensor(np.asarray(quotient, dtype=xv.dtype), x._dtype)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of nothing is NaN, as TF
        out = make_tensor(np.mean(xv, axis=axes, keepdims=keepdims, dtype=xv.dtype), x._dtype)

    def grad(g):
        scaled = _expand(g, axes, keepdims) / np.asarray(count, g.dtype)
        return np.broadcast_to(scaled, xv.shape)

    record("Mean", [x], [out], [grad])
    return out


def _variance(op: str, input_tensor, axis, keepdims: bool):
    """``(x, axes, deviations from the mean, variance with keepdims)``, as TF computes it:
    the mean of the squared deviations from the mean (not the one-pass sum of squares)."""
    x = convert_to_tensor(input_tensor)
    if not x._dtype.is_floating:
        raise TypeError(
            f"{op}: input must be either real or complex, got integer type {x._dtype.name}; "
            "tf.cast it to a float type."
        )
    xv = x._value
    axes = _axes(axis, xv.ndim)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # of nothing: NaN, as TF
        deviations = xv - np.mean(xv, axis=axes, keepdims=True, dtype=xv.dtype)
        variance = np.mean(np.square(deviations), axis=axes, keepdims=True, dtype=xv.dtype)
    return x, axes, deviations, variance


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """``tf.math.reduce_variance``: the mean squared deviation from the mean over ``axis``.

    Raises:
        TypeError: an integer input (as TF).
    """
    x, axes, deviations, variance = _variance("reduce_variance", input_tensor, axis, keepdims)
    count = max(1, int(np.prod([x._value.shape[a] for a in axes], dtype=np.int64)))
    out = make_tensor(variance if keepdims else np.squeeze(variance, axis=axes), x._dtype)

    def grad(g):
        return _expand(g, axes, keepdims) * (deviations * np.asarray(2 / count, g.dtype))

    record("Variance", [x], [out], [grad])
    return out


def reduce_std(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """``tf.math.reduce_std``: the square root of :func:`reduce_variance`.

    Raises:
        TypeError: an integer input (as TF).
    """
    x, axes, deviations, variance = _variance("reduce_std", input_tensor, axis, keepdims)
    count = max(1, int(np.prod([x._value.shape[a] for a in axes], dtype=np.int64)))
    std = np.sqrt(variance)
    out = make_tensor(std if keepdims else np.squeeze(std, axis=axes), x._dtype)

    def grad(g):
        with np.errstate(divide="ignore", invalid="ignore"):  # a constant input: inf/NaN, as TF
            scale = deviations / (std * np.asarray(count, g.dtype))
        return _expand(g, axes, keepdims) * scale

    record("Std", [x], [out], [grad])
    return out


def _extreme(op: str, input_tensor, axis, keepdims: bool, fn) -> Tensor:
    x = _input(op, input_tensor, "iuf")
    xv = x._value
    axes = _axes(axis, xv.ndim)
    if xv.size == 0 and any(xv.shape[a] == 0 for a in axes):
        # TF returns the reduction's identity: -inf / +inf, or an integer dtype's extreme.
        if x._dtype.is_floating:
            fill = -np.inf if op == "Max" else np.inf
        else:
            fill = np.iinfo(xv.dtype).min if op == "Max" else np.iinfo(xv.dtype).max
        shape = tuple(1 if i in axes else d for i, d in enumerate(xv.shape))
        shape = shape if keepdims else _dropped(xv.shape, axes)
        return make_tensor(np.full(shape, fill, xv.dtype), x._dtype)
    kept = fn(xv, axis=axes, keepdims=True)
    out = make_tensor(kept if keepdims else kept.reshape(_dropped(xv.shape, axes)), x._dtype)

    def grad(g):
        hits = xv == kept
        counts = np.sum(hits, axis=axes, keepdims=True, dtype=g.dtype)
        return hits * (_expand(g, axes, keepdims) / counts)

    record(op, [x], [out], [grad])
    return out


def reduce_max(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Maximum over ``axis``; ties share the gradient equally."""
    if getattr(type(input_tensor), "_is_ragged", False):
        return input_tensor._reduce("max", axis, keepdims)
    return _extreme("Max", input_tensor, axis, keepdims, np.max)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Minimum over ``axis``; ties share the gradient equally."""
    if getattr(type(input_tensor), "_is_ragged", False):
        return input_tensor._reduce("min", axis, keepdims)
    return _extreme("Min", input_tensor, axis, keepdims, np.min)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Product over ``axis``; the gradient is exact also where inputs are zero."""
    x = _input("Prod", input_tensor, "iuf")
    xv = x._value
    axes = _axes(axis, xv.ndim)
    with np.errstate(over="ignore"):
        out = make_tensor(np.prod(xv, axis=axes, keepdims=keepdims, dtype=xv.dtype), x._dtype)

    def grad(g):
        # Product of all other elements = exclusive cumprod from the left times from the
        # right, along the reduced axes flattened into one (no division: zeros are fine).
        others = [a for a in range(xv.ndim) if a not in axes]
        perm = others + list(axes)
        moved = np.transpose(xv, perm)
        flat = moved.reshape(moved.shape[: len(others)] + (-1,))
        ones = np.ones(flat.shape[:-1] + (1,), flat.dtype)
        left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
        right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        partial = (left * right).reshape(moved.shape)
        partial = np.transpose(partial, np.argsort(perm))
        return partial * _expand(g, axes, keepdims)

    record("Prod", [x], [out], [grad])
    return out


def reduce_any(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical OR over ``axis`` of a bool tensor."""
    x = _input("Any", input_tensor, "b")
    axes = _axes(axis, x._value.ndim)
    return make_tensor(np.any(x._value, axis=axes, keepdims=keepdims), dtypes.bool)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """Logical AND over ``axis`` of a bool tensor."""
    x = _input("All", input_tensor, "b")
    axes = _axes(axis, x._value.ndim)
    return make_tensor(np.all(x._value, axis=axes, keepdims=keepdims), dtypes.bool)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably (shifted by the maximum)."""
    x = _input("LogSumExp", input_tensor, "f")
    xv = x._value
    axes = _axes(axis, xv.ndim)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        shift = np.max(xv, axis=axes, keepdims=True) if xv.size else np.zeros((), xv.dtype)
        shift = np.where(np.isfinite(shift), shift, 0).astype(xv.dtype)
        kept = np.log(np.sum(np.exp(xv - shift), axis=axes, keepdims=True)) + shift
    out = make_tensor(kept if keepdims else kept.reshape(_dropped(xv.shape, axes)), x._dtype)

    def grad(g):
        with np.errstate(invalid="ignore", over="ignore"):
            return np.exp(xv - kept) * _expand(g, axes, keepdims)

    record("LogSumExp", [x], [out], [grad])
    return out


def _arg(op: str, input, axis, output_type, fn) -> Tensor:
    x = _input(op, input, "iuf")
    output_type = dtypes.as_dtype(output_type)
    if output_type not in (dtypes.int32, dtypes.int64, dtypes.int16, dtypes.uint8):
        raise TypeError(f"output_type must be an integer dtype, got {output_type.name}.")
    axis = 0 if axis is None else axis
    if np.ndim(axis._value if isinstance(axis, Tensor) else axis) != 0:
        raise TypeError(f"{op} takes a single integer axis, got {axis!r}.")
    (ax,) = _axes(axis, x._value.ndim)
    if x._value.shape[ax] == 0:
        raise errors.InvalidArgumentError(
            f"Reduction axis {ax} is empty in shape {list(x._value.shape)} [Op:{op}]."
        )
    return make_tensor(fn(x._value, axis=ax).astype(output_type._np), output_type)


def argmax(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:
    """Index of the largest value along ``axis`` (default 0); the first one on ties."""
    return _arg("ArgMax", input, axis, output_type, np.argmax)


def argmin(input, axis=None, output_type=dtypes.int64, name=None) -> Tensor:
    """Index of the smallest value along ``axis`` (default 0); the first one on ties."""
    return _arg("ArgMin", input, axis, output_type, np.argmin)
