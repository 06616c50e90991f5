"""What the ``tf.strings`` ops share: string inputs as object arrays of ``bytes``, string
results as tensors, and the elementwise rule for ragged inputs (map over ``flat_values``)."""

from __future__ import annotations

import functools

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["string_array", "string_tensor", "elementwise", "as_bytes"]


def as_bytes(value) -> bytes:
    """A Python ``str`` (UTF-8) or ``bytes`` as bytes (a separator, a pattern)."""
    if isinstance(value, Tensor):
        value = value._value[()] if value.ndim == 0 else value._value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    raise TypeError(f"Expected a string, got {value!r} of type {type(value).__name__}.")


def string_array(value, op: str) -> np.ndarray:
    """``value`` (a string tensor, or Python/NumPy strings) as an object array of bytes.

    Raises:
        InvalidArgumentError: a tensor that is not strings (TF's message).
        TypeError: a Python value that is not strings.
    """
    if isinstance(value, Tensor):
        if value.dtype != dtypes.string:
            raise errors.InvalidArgumentError(
                f"cannot compute {op} as input #0(zero-based) was expected to be a string "
                f"tensor but is a {value.dtype.name} tensor [Op:{op}]; convert numbers with "
                "tf.strings.as_string first."
            )
        return value._value
    if isinstance(value, np.ndarray) and value.dtype.kind in "US":
        value = value.astype(object)
    try:
        tensor = convert_to_tensor(value, dtype=dtypes.string)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string") from exc
    array = tensor._value
    if array.dtype != object or not all(isinstance(v, (str, bytes)) for v in array.ravel()):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype string")
    if any(isinstance(v, str) for v in array.ravel().tolist()):
        flat = [v.encode("utf-8") if isinstance(v, str) else v for v in array.ravel().tolist()]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        array = out.reshape(array.shape)
    return array


def string_tensor(items, shape) -> Tensor:
    """A string tensor of ``shape`` from a flat list of bytes."""
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return make_tensor(out.reshape(shape), dtypes.string)


def elementwise(fn):
    """Let an op whose first argument is a string tensor take a RaggedTensor there too: the
    op runs on ``flat_values`` and the result keeps the row partition (TF's dispatch)."""

    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):
        if is_ragged(input):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)

    return wrapper
