"""``constant`` and ``convert_to_tensor``: how Python and NumPy values become tensors.

TF's rules, which simdist follows:

* a tensor passes through; asking for another dtype is an error, not a cast;
* a Python scalar or list gets ``dtype`` if given (``1`` may become ``1.0``, but ``1.5``
  never silently becomes ``1``: TypeError), else int32/int64, float32 or bool;
* a NumPy array keeps its dtype, or is cast to ``dtype`` when one is given;
* objects that know how to become a tensor (variables, distributed values) implement
  ``_to_tensor(dtype)``.
"""

from __future__ import annotations

import numbers

import numpy as np

from simdist.core import autocast, dtypes
from simdist.core.context import mark_runtime_started
from simdist.core.device import current_device
from simdist.core.tensor import Tensor

__all__ = ["constant", "convert_to_tensor", "is_tensor"]


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _check_convertible(value, raw: np.ndarray, dtype: dtypes.DType) -> None:
    """TF converts ints to floats, but never floats to ints nor numbers to/from bool; an
    empty Python list has no items to refuse (``tf.constant([], tf.int64)``)."""
    if raw.size == 0 and isinstance(value, (list, tuple)):
        return
    kind = raw.dtype.kind
    if raw.size == 0 and isinstance(value, (list, tuple)):
        return  # an empty Python list has no elements to refuse: tf.constant([], tf.int32)
    refused = (
        (kind == "f" and (dtype.is_integer or dtype.is_bool))
        or (kind == "b") != dtype.is_bool
        or (kind in "iu" and dtype.is_integer and raw.size and _out_of_range(raw, dtype))
    )
    if refused:
        raise TypeError(
            f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}; use tf.cast for "
            "an explicit conversion."
        )


def _out_of_range(raw: np.ndarray, dtype: dtypes.DType) -> bool:
    info = np.iinfo(dtype.as_numpy_dtype)
    return bool(raw.min() < info.min or raw.max() > info.max)


def _to_array(value, dtype: dtypes.DType | None) -> tuple[np.ndarray, dtypes.DType | None]:
    if _holds_tensors(value):
        from simdist.core.ops import array_ops

        packed = array_ops.stack_nested(value, dtype)
        return packed._value, packed._dtype
    if isinstance(value, (np.ndarray, np.generic)):
        raw = np.array(value)  # a copy: the caller may mutate their array later
        if raw.dtype.kind in "US":
            raw = raw.astype(object)
        if raw.dtype.kind == "O":
            _check_object_array(raw)
        if dtype is None:
            dtype = dtypes.as_dtype(raw.dtype)
            return (_as_bytes(raw) if dtype == dtypes.string else raw), dtype
    elif isinstance(value, (bool, numbers.Number, list, tuple, str, bytes)):
        try:
            raw = np.array(value)
        except ValueError:
            raw = np.empty(0, dtype=object)  # numpy refuses ragged lists
        if raw.dtype.kind in "SU":  # NumPy's fixed-width strings drop trailing NUL bytes
            raw = _string_array(value, raw.shape)
        elif raw.dtype.kind == "O":
            raise ValueError(
                f"Can't convert non-rectangular Python sequence to Tensor: {value!r}; every "
                "row of a nested list must have the same length (and the same kind of items)."
            )
        if dtype is None:
            dtype = dtypes.infer_python_dtype(value)
            if dtype == dtypes.string:
                return _as_bytes(raw.astype(object)), dtype
            return np.array(value, dtype=dtype.as_numpy_dtype), dtype
    else:
        raise ValueError(
            f"Attempt to convert a value ({value!r}) with an unsupported type "
            f"({type(value)}) to a Tensor. Pass a number, a (nested) list, a NumPy array or "
            "a tensor."
        )
    if dtype == dtypes.string:
        return _as_bytes(raw), dtype
    _check_convertible(value, raw, dtype)
    return raw.astype(dtype.as_numpy_dtype), dtype


def _string_array(value, shape: tuple) -> np.ndarray:
    """A (nested) list of str/bytes as an object array of ``shape``, each item kept whole."""
    out = np.empty(shape, dtype=object)
    if not shape:
        out[()] = value
        return out
    flat = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            flat.append(item)
    out.reshape(-1)[:] = flat
    return out


def _check_object_array(raw: np.ndarray) -> None:
    """An object array converts only as a string tensor: every element str or bytes (as TF)."""
    for v in raw.reshape(-1).tolist():
        if not isinstance(v, (str, bytes)):
            raise ValueError(
                f"Failed to convert a NumPy array to a Tensor (Unsupported object type "
                f"{type(v).__name__}); an object array converts only when every element is a "
                "str or bytes. Give the array a numeric dtype (e.g. arr.astype(np.float32))."
            )


def _as_bytes(raw: np.ndarray) -> np.ndarray:
    """TF strings are bytes: an object array whose ``str`` elements are UTF-8 encoded."""
    out = np.empty(raw.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(raw.reshape(-1).tolist()):
        flat[i] = v.encode("utf-8") if isinstance(v, str) else v
    return out


def _holds_tensors(value) -> bool:
    """A list/tuple with a tensor or variable among its leaves (packed with tf.stack)."""
    return isinstance(value, (list, tuple)) and any(
        isinstance(v, Tensor) or hasattr(v, "_to_tensor") for v in _leaves(value)
    )


def _leaves(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            yield v


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None) -> Tensor:
    """Return ``value`` as a tensor (``tf.convert_to_tensor``).

    Args:
        value: a tensor, variable, number, nested list or NumPy array.
        dtype: required dtype; a tensor of another dtype raises.
        dtype_hint: preferred dtype for Python values that have none of their own.

    Raises:
        ValueError: a tensor (or variable) of a dtype other than ``dtype``.
        TypeError: a value that cannot be represented in ``dtype`` (``1.5`` as int32).
    """
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value._dtype != dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                f"{value._dtype.name}: {value!r}. Use tf.cast to change a tensor's dtype."
            )
        return value
    to_tensor = getattr(value, "_to_tensor", None)
    if to_tensor is not None:
        if getattr(value, "_autocast", False):  # a mixed-precision layer's weight
            return autocast.read(value, dtype)
        return to_tensor(dtype)
    if _holds_tensors(value):  # [t1, t2]: a differentiable stack, as in TF
        from simdist.core.ops import array_ops

        return array_ops.stack_nested(value, dtype)
    if dtype is None and dtype_hint is not None and not isinstance(value, (np.ndarray, np.generic)):
        try:
            return constant(value, dtype=dtype_hint)
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype)


def constant(value, dtype=None, shape=None, name="Const") -> Tensor:
    """A tensor holding ``value`` (``tf.constant``); ``shape`` broadcasts or reshapes it.

    >>> import simdist as tf
    >>> tf.constant(1.5)
    <tf.Tensor: shape=(), dtype=float32, numpy=1.5>
    """
    mark_runtime_started()
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(value, Tensor) and dtype is not None and value._dtype != dtype:
        raise TypeError(
            f"Expected tensor {value} with dtype {dtype!r}, but got dtype {value._dtype!r}; "
            "use tf.cast to change a tensor's dtype."
        )
    if isinstance(value, Tensor) or hasattr(value, "_to_tensor"):
        t = convert_to_tensor(value)
        arr = t._value if dtype is None else t._value.astype(dtype.as_numpy_dtype)
        dtype = dtype or t._dtype
    else:
        arr, dtype = _to_array(value, dtype)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(
                f"Eager execution of tf.constant with unsupported shape. Tensor {value!r} "
                f"(converted from {arr.shape}) has {arr.size} elements, but got `shape` {shape} "
                f"with {int(np.prod(shape))} elements."
            )
    if not arr.flags.owndata or not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    return Tensor(arr, dtype, current_device())
