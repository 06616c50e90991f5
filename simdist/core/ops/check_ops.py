"""Runtime assertions (``tf.debugging.assert_*``, ``check_numerics``), TF's eager behaviour.

Eagerly, TF checks at once and returns ``None`` when the condition holds. A value check
that fails raises InvalidArgumentError with TF's message layout (the caller's ``message``
first, then the condition, the first differing indices and values); a check of static
facts (``assert_rank``, ``assert_shapes``) raises ValueError, as TF's does when the shapes
are known, which eagerly they always are. Operands are converted and compared with
simdist's ops, so incompatible shapes or dtypes raise the same errors as ``x == y``.
``check_numerics`` returns its input (the gradient passes through unchanged).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import comparison_ops
from simdist.core.ops._helpers import as_tensors
from simdist.core.tensor import Tensor

__all__ = [
    "assert_equal",
    "assert_none_equal",
    "assert_near",
    "assert_greater",
    "assert_greater_equal",
    "assert_less",
    "assert_less_equal",
    "assert_positive",
    "assert_non_negative",
    "assert_negative",
    "assert_non_positive",
    "assert_rank",
    "assert_shapes",
    "check_numerics",
    "assert_all_finite",
    "set_log_device_placement",
]


def _prefix(message) -> str:
    return f"{message}\n" if message else ""


def _failed(message, symbol: str, xv: np.ndarray, yv: np.ndarray, holds: np.ndarray, summarize):
    limit = 3 if summarize is None else int(summarize)
    bad = np.argwhere(~np.broadcast_to(holds, np.broadcast_shapes(xv.shape, yv.shape)))[:limit]
    xb, yb = np.broadcast_arrays(xv, yv)
    picked = [tuple(i) for i in bad]
    lines = [
        f"Condition x {symbol} y did not hold.",
        f"Indices of first {len(picked)} different values:",
        str(np.asarray(bad).tolist()).replace(",", ""),
        "Corresponding x values:",
        str(np.asarray([xb[i] for i in picked])),
        "Corresponding y values:",
        str(np.asarray([yb[i] for i in picked])),
        f"First {min(xv.size, limit)} elements of x:",
        str(xv.reshape(-1)[:limit]),
        f"First {min(yv.size, limit)} elements of y:",
        str(yv.reshape(-1)[:limit]),
    ]
    return errors.InvalidArgumentError(_prefix(message) + "\n".join(lines))


def _binary(compare, symbol: str, x, y, message, summarize) -> None:
    x, y = as_tensors("Assert", x, y)
    holds = compare(x, y)._value
    if not np.all(holds):
        raise _failed(message, symbol, x._value, y._value, holds, summarize)


def assert_equal(x, y, message=None, summarize=None, name=None) -> None:
    """Raise unless ``x == y`` element-wise (broadcasting); ``None`` when it holds.

    Raises:
        InvalidArgumentError: some element differs (TF's message, after ``message``), or the
            shapes do not broadcast, or the dtypes differ.
    """
    _binary(comparison_ops.equal, "==", x, y, message, summarize)


def assert_none_equal(x, y, message=None, summarize=None, name=None) -> None:
    """Raise unless ``x != y`` for every element."""
    _binary(comparison_ops.not_equal, "!=", x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None) -> None:
    """Raise unless ``x > y`` for every element."""
    _binary(comparison_ops.greater, ">", x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None) -> None:
    """Raise unless ``x >= y`` for every element."""
    _binary(comparison_ops.greater_equal, ">=", x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None) -> None:
    """Raise unless ``x < y`` for every element."""
    _binary(comparison_ops.less, "<", x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None) -> None:
    """Raise unless ``x <= y`` for every element."""
    _binary(comparison_ops.less_equal, "<=", x, y, message, summarize)


def _against_zero(compare, symbol: str, x, message, summarize) -> None:
    x = convert_to_tensor(x)
    _binary(compare, symbol, x, np.zeros((), x.dtype.as_numpy_dtype), message, summarize)


def assert_positive(x, message=None, summarize=None, name=None) -> None:
    """Raise unless every element is > 0."""
    _against_zero(comparison_ops.greater, ">", x, message, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None) -> None:
    """Raise unless every element is >= 0."""
    _against_zero(comparison_ops.greater_equal, ">=", x, message, summarize)


def assert_negative(x, message=None, summarize=None, name=None) -> None:
    """Raise unless every element is < 0."""
    _against_zero(comparison_ops.less, "<", x, message, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None) -> None:
    """Raise unless every element is <= 0."""
    _against_zero(comparison_ops.less_equal, "<=", x, message, summarize)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None) -> None:
    """Raise unless ``|x - y| <= atol + rtol * |y|`` element-wise.

    The default tolerances are ``10 * eps`` of the dtype (TF's), e.g. 1.19e-6 for float32.

    Raises:
        InvalidArgumentError: some element is further apart ("not equal to tolerance").
    """
    x, y = as_tensors("Assert", x, y)
    xv, yv = x._value, y._value
    eps = np.finfo(xv.dtype).eps if xv.dtype.kind == "f" else 0
    rtol_v = 10 * eps if rtol is None else float(convert_to_tensor(rtol)._value)
    atol_v = 10 * eps if atol is None else float(convert_to_tensor(atol)._value)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(xv - yv) <= atol_v + rtol_v * np.abs(yv)
    if not np.all(close):
        raise errors.InvalidArgumentError(
            _prefix(message)
            + f"x and y not equal to tolerance rtol = {rtol_v:g}, atol = {atol_v:g}\n"
            + f"x (shape={xv.shape} dtype={x.dtype.name}) = {xv.reshape(-1)[:3]}\n"
            + f"y (shape={yv.shape} dtype={y.dtype.name}) = {yv.reshape(-1)[:3]}"
        )


def assert_rank(x, rank, message=None, name=None) -> None:
    """Raise ValueError unless ``x`` has rank ``rank``.

    Raises:
        ValueError: another rank ("must have rank").
    """
    t = convert_to_tensor(x)
    wanted = int(convert_to_tensor(rank)._value)
    if t.ndim != wanted:
        raise ValueError(
            f"{_prefix(message)}Tensor must have rank {wanted}.  Received rank {t.ndim}, shape "
            f"{tuple(t.shape)}"
        )


def _dims(spec) -> list:
    """A shape spec (tuple of names, ints, or a TensorShape-like) as a list."""
    if isinstance(spec, str):
        return [spec]
    if hasattr(spec, "as_list"):
        return spec.as_list()
    return list(spec)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None) -> None:
    """Check tensors' shapes against named dims (``tf.debugging.assert_shapes``).

    ``shapes`` is a list of ``(tensor, spec)`` pairs (or a dict tensor -> spec); a spec
    names each dim with a string (the same name must mean the same size everywhere), an
    int (that size), or ``None``/``"."`` (any size). A spec starting with ``"*"`` matches
    any number of leading dims.

    >>> import simdist as tf
    >>> tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")), (tf.ones([3]), ("D",))])

    Raises:
        ValueError: a rank or size that breaks the spec, naming the tensor that fixed it.
    """
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes: dict[str, tuple[int, str]] = {}
    for tensor, spec in pairs:
        t = convert_to_tensor(tensor)
        dims = _dims(spec)
        described = f"Tensor shape={tuple(t.shape)} dtype={t.dtype.name}"
        actual = list(t.shape)
        if dims and dims[0] == "*":
            dims = dims[1:]
            if len(actual) < len(dims):
                raise ValueError(
                    f"{_prefix(message)}{described} must have rank at least {len(dims)}.  "
                    f"Received rank {len(actual)}, shape {tuple(actual)}"
                )
            actual = actual[len(actual) - len(dims) :]
        elif len(actual) != len(dims):
            raise ValueError(
                f"{_prefix(message)}Tensor  must have rank {len(dims)}.  Received rank "
                f"{len(actual)}, shape {tuple(t.shape)}"
            )
        for position, (want, got) in enumerate(zip(dims, actual, strict=True)):
            if want is None or want == ".":
                continue
            if isinstance(want, str):
                if want not in sizes:
                    sizes[want] = (got, f"Specified by {described} dimension {position}.")
                    continue
                size, origin = sizes[want]
            else:
                size, origin = int(want), "Specified explicitly."
            if got != size:
                raise ValueError(
                    f"{_prefix(message)}{origin}  {described} dimension {position} must have "
                    f"size {size}.  Received size {got}, shape {tuple(t.shape)}"
                )


def check_numerics(tensor, message, name=None) -> Tensor:
    """``tensor`` itself if it holds no NaN or Inf (``tf.debugging.check_numerics``).

    Raises:
        InvalidArgumentError: a NaN or an Inf ("Tensor had NaN values"), or a non-float
            tensor.
    """
    t = convert_to_tensor(tensor)
    if not t.dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {t.dtype.name} is not in the list of allowed values: "
            "bfloat16, half, float, double [Op:CheckNumerics]; only floats can be NaN or Inf."
        )
    value = t._value
    if np.isnan(value).any():
        raise errors.InvalidArgumentError(f"{message} : Tensor had NaN values [Op:CheckNumerics]")
    if np.isinf(value).any():
        raise errors.InvalidArgumentError(f"{message} : Tensor had Inf values [Op:CheckNumerics]")
    return t


def assert_all_finite(x, message, name=None) -> Tensor:
    """``x`` itself if it holds no NaN or Inf (``tf.debugging.assert_all_finite``)."""
    return check_numerics(x, message)


def set_log_device_placement(enabled: bool) -> None:
    """Accepted and ignored: simdist places ops on simulated devices and logs nothing."""
    del enabled
