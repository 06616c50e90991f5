"""Element-wise comparisons and logical ops; their bool outputs carry no gradient.

``==`` and ``!=`` on tensors follow TF's eager operators: comparing with ``None`` gives a
Python bool, and shapes that do not broadcast give a scalar ``False`` (``True`` for ``!=``)
instead of an error; ``tf.math.equal`` itself raises on such shapes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.ops._helpers import as_tensors
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
]  # fmt: skip


def _compare(op: str, x, y, fn: Callable, incompatible_shape_error: bool = True) -> Tensor:
    x, y = as_tensors(op, x, y)
    xv, yv = x._value, y._value
    try:
        result = fn(xv, yv)
    except ValueError:
        if not incompatible_shape_error:
            return make_tensor(np.array(op == "NotEqual"), dtypes.bool)
        raise errors.InvalidArgumentError(
            f"Incompatible shapes: {list(xv.shape)} vs. {list(yv.shape)} [Op:{op}]; the shapes "
            "must be equal or broadcastable."
        ) from None
    return make_tensor(np.asarray(result, dtype=np.bool_), dtypes.bool)


def equal(x, y, name=None) -> Tensor:
    """``x == y`` element-wise, as a bool tensor.

    Raises:
        InvalidArgumentError: the shapes do not broadcast, or the dtypes differ.
    """
    return _compare("Equal", x, y, np.equal)


def not_equal(x, y, name=None) -> Tensor:
    """``x != y`` element-wise, as a bool tensor."""
    return _compare("NotEqual", x, y, np.not_equal)


def _ordered(op: str, x, y, fn: Callable) -> Tensor:
    x, y = as_tensors(op, x, y)
    if x._dtype.is_bool or x._dtype == dtypes.string:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values for "
            f"[Op:{op}]; order comparisons need number inputs."
        )
    return _compare(op, x, y, fn)


def less(x, y, name=None) -> Tensor:
    """``x < y`` element-wise."""
    return _ordered("Less", x, y, np.less)


def less_equal(x, y, name=None) -> Tensor:
    """``x <= y`` element-wise."""
    return _ordered("LessEqual", x, y, np.less_equal)


def greater(x, y, name=None) -> Tensor:
    """``x > y`` element-wise."""
    return _ordered("Greater", x, y, np.greater)


def greater_equal(x, y, name=None) -> Tensor:
    """``x >= y`` element-wise."""
    return _ordered("GreaterEqual", x, y, np.greater_equal)


def tensor_equals(x, y):
    """``x == y`` for the operator: ``False`` for ``None``, scalar False for bad shapes."""
    if y is None:
        return False
    return _compare("Equal", x, y, np.equal, incompatible_shape_error=False)


def tensor_not_equals(x, y):
    """``x != y`` for the operator: ``True`` for ``None``, scalar True for bad shapes."""
    if y is None:
        return True
    return _compare("NotEqual", x, y, np.not_equal, incompatible_shape_error=False)


def _logical(op: str, fn: Callable, *values) -> Tensor:
    tensors = as_tensors(op, *values)
    if not tensors[0]._dtype.is_bool:
        raise errors.InvalidArgumentError(
            f"cannot compute {op} as input #0(zero-based) was expected to be a bool tensor "
            f"but is a {tensors[0]._dtype.name} tensor; compare or tf.cast to tf.bool first."
        )
    arrays = [t._value for t in tensors]
    try:
        return make_tensor(fn(*arrays), dtypes.bool)
    except ValueError:
        shapes = " vs. ".join(str(list(a.shape)) for a in arrays)
        raise errors.InvalidArgumentError(f"Incompatible shapes: {shapes} [Op:{op}]") from None


def logical_and(x, y, name=None) -> Tensor:
    """Element-wise ``x AND y`` of bool tensors."""
    return _logical("LogicalAnd", np.logical_and, x, y)


def logical_or(x, y, name=None) -> Tensor:
    """Element-wise ``x OR y`` of bool tensors."""
    return _logical("LogicalOr", np.logical_or, x, y)


def logical_xor(x, y, name=None) -> Tensor:
    """Element-wise ``x XOR y`` of bool tensors."""
    return _logical("LogicalXor", np.logical_xor, x, y)


def logical_not(x, name=None) -> Tensor:
    """Element-wise ``NOT x`` of a bool tensor."""
    return _logical("LogicalNot", np.logical_not, x)


def _bitwise_or_logical(op: str, logical: Callable, bitwise: Callable, *values) -> Tensor:
    """``&``, ``|``, ``^``, ``~``: logical on bool tensors, bitwise on integer tensors (as TF)."""
    tensors = as_tensors(op, *values)
    if not tensors[0]._dtype.is_integer:
        return _logical(f"Logical{op}", logical, *tensors)
    arrays = [t._value for t in tensors]
    try:
        return make_tensor(bitwise(*arrays), tensors[0]._dtype)
    except ValueError:
        shapes = " vs. ".join(str(list(a.shape)) for a in arrays)
        raise errors.InvalidArgumentError(
            f"Incompatible shapes: {shapes} [Op:Bitwise{op}]"
        ) from None


def and_(x, y) -> Tensor:
    """The ``&`` operator."""
    return _bitwise_or_logical("And", np.logical_and, np.bitwise_and, x, y)


def or_(x, y) -> Tensor:
    """The ``|`` operator."""
    return _bitwise_or_logical("Or", np.logical_or, np.bitwise_or, x, y)


def xor_(x, y) -> Tensor:
    """The ``^`` operator."""
    return _bitwise_or_logical("Xor", np.logical_xor, np.bitwise_xor, x, y)


def invert_(x) -> Tensor:
    """The ``~`` operator."""
    return _bitwise_or_logical("Not", np.logical_not, np.invert, x)
