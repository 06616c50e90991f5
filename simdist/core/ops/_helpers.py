"""What every op module needs: matching input dtypes as TF does, and un-broadcasting grads."""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, check_same_dtype

__all__ = ["as_tensors", "unbroadcast"]


def as_tensors(op_name: str, *values) -> list[Tensor]:
    """Convert an op's inputs the way TF's eager ops do.

    Non-tensor inputs (Python numbers, lists, NumPy arrays) take the dtype of the first input
    that already is a tensor (or a variable); tensors must all share one dtype.

    Raises:
        InvalidArgumentError: two tensor inputs have different dtypes.
        TypeError: a Python value that the tensors' dtype cannot hold (``1.5`` for int32).
    """
    anchor = next((v for v in values if isinstance(v, Tensor) or hasattr(v, "_to_tensor")), None)
    if anchor is None:
        tensors = [convert_to_tensor(v) for v in values]
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
