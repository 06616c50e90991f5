"""Python operators on tensors and variables (``x + y``, ``x[1:]``, ``x @ w``...).

As TF: the tensor's dtype wins over a Python value (``x + 1`` keeps ``x.dtype``), two
tensors must share a dtype, and ``==`` compares element-wise.
"""

from __future__ import annotations

from simdist.core.ops import array_ops, math_ops
from simdist.core.tensor import Tensor
from simdist.core.variables import Variable


def _binary(fn, reverse: bool = False):
    if reverse:
        return lambda self, other: fn(other, self)
    return lambda self, other: fn(self, other)


_BINARY = {
    "add": math_ops.add,
    "sub": math_ops.subtract,
    "mul": math_ops.multiply,
    "truediv": math_ops.divide,
    "floordiv": math_ops.floordiv,
    "mod": math_ops.floormod,
    "pow": math_ops.pow,
    "matmul": math_ops.matmul,
    "and": math_ops.logical_and,
    "or": math_ops.logical_or,
    "xor": math_ops.logical_xor,
}
_COMPARE = {
    "lt": math_ops.less,
    "le": math_ops.less_equal,
    "gt": math_ops.greater,
    "ge": math_ops.greater_equal,
    "eq": math_ops.equal,
    "ne": math_ops.not_equal,
}


def _install(cls) -> None:
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", _binary(fn))
        setattr(cls, f"__r{name}__", _binary(fn, reverse=True))
    for name, fn in _COMPARE.items():
        setattr(cls, f"__{name}__", _binary(fn))
    cls.__neg__ = lambda self: math_ops.negative(self)
    cls.__pos__ = lambda self: self if isinstance(self, Tensor) else self.value()
    cls.__abs__ = lambda self: math_ops.abs(self)
    cls.__invert__ = lambda self: math_ops.logical_not(self)
    cls.__getitem__ = lambda self, key: array_ops.strided_slice(self, key)


_install(Tensor)
_install(Variable)
