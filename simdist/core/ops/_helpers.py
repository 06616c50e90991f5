"""What every op module needs: matching input dtypes as TF does, and un-broadcasting grads."""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, check_same_dtype

__all__ = ["as_tensors", "unbroadcast", "int_list", "normalize_axis"]


def as_tensors(op_name: str, *values) -> list[Tensor]:
    """Convert an op's inputs the way TF's eager ops do.

    Non-tensor inputs (Python numbers, lists, NumPy arrays) take the dtype of the first input
    that already is a tensor (or a variable), else of the first input; tensors must all
    share one dtype.

    Raises:
        InvalidArgumentError: two tensor inputs have different dtypes.
        TypeError: a Python value that the tensors' dtype cannot hold (``1.5`` for int32).
    """
    if all(type(v) is Tensor or hasattr(v, "_to_tensor") for v in values):
        # Fast path (a layer's input and its variables): tensors pass through and variables
        # are read, as convert_to_tensor does below for them; no dtype is imposed on either,
        # so only the dtype check remains (the general path would read the anchor twice).
        # (a mixed-precision layer's weight reads through convert_to_tensor: its autocast)
        tensors = [
            v
            if type(v) is Tensor
            else (convert_to_tensor(v) if getattr(v, "_autocast", False) else v._to_tensor(None))
            for v in values
        ]
        check_same_dtype(op_name, *tensors)
        return tensors
    anchor = next((v for v in values if isinstance(v, Tensor) or hasattr(v, "_to_tensor")), None)
    if anchor is None:
        # As TF's eager ops: the first value fixes the dtype of the others.
        first = convert_to_tensor(values[0])
        tensors = [first] + [convert_to_tensor(v, dtype=first.dtype) for v in values[1:]]
    else:
        dtype = convert_to_tensor(anchor).dtype if not isinstance(anchor, Tensor) else anchor.dtype
        tensors = [
            convert_to_tensor(v)
            if isinstance(v, Tensor) or hasattr(v, "_to_tensor")
            else convert_to_tensor(v, dtype=dtype)
            for v in values
        ]
    check_same_dtype(op_name, *tensors)
    return tensors


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes along which an input of ``shape`` was broadcast."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and grad.shape[lead + i] != 1
    )
    out = grad.sum(axis=axes, keepdims=True) if axes else grad
    if lead:
        out = out.reshape(out.shape[lead:])
    return out.reshape(shape)


def int_list(value, what: str, vector: bool = False) -> list[int]:
    """A list of Python ints from an int, list, tuple, TensorShape or integer tensor
    (flattened; with ``vector``, a nested list is an InvalidArgumentError, as TF's perm,
    axis and multiples arguments are)."""
    if type(value) in (list, tuple) and all(type(v) is int for v in value):
        return list(value)  # already plain ints (a layer's reshape): nothing to convert
    if isinstance(value, Tensor) or hasattr(value, "_to_tensor"):
        arr = convert_to_tensor(value)._value
    else:
        if hasattr(value, "as_list"):  # a TensorShape
            value = value.as_list()
        arr = np.asarray(value)  # a list may hold scalar tensors: [tf.shape(x)[0], -1]
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must hold integers, got {value!r}.")
    if vector and arr.ndim > 1:  # TF: a vector of ints (a nested list is not flattened)
        raise errors.InvalidArgumentError(
            f"{what} must be an int or a flat list of ints, got {value!r} of shape "
            f"{list(arr.shape)}."
        )
    return [int(v) for v in arr.reshape(-1)]


def normalize_axis(axis, ndim: int, op: str) -> int:
    """``axis`` in ``[0, ndim)``; InvalidArgumentError (naming ``op``) when out of range."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise errors.InvalidArgumentError(
            f"Expected axis in the range [{-ndim}, {ndim}), but got {axis} [Op:{op}]."
        )
    return axis % ndim
