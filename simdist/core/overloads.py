"""Python operators on tensors and variables (``x + y``, ``x[1:]``, ``x @ w``...).

As TF: the tensor's dtype wins over a Python value (``x + 1`` keeps ``x.dtype``), two
tensors must share a dtype, ``==`` compares element-wise (``x == None`` is ``False``), and
tensors stay unhashable (use ``x.ref()`` as a dict key).
"""

from __future__ import annotations

from simdist.core.ops import comparison_ops, math_ops, slicing_ops
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
    "and": comparison_ops.and_,
    "or": comparison_ops.or_,
    "xor": comparison_ops.xor_,
}
_COMPARE = {
    "lt": math_ops.less,
    "le": math_ops.less_equal,
    "gt": math_ops.greater,
    "ge": math_ops.greater_equal,
    "eq": comparison_ops.tensor_equals,
    "ne": comparison_ops.tensor_not_equals,
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
    cls.__invert__ = lambda self: comparison_ops.invert_(self)
    cls.__getitem__ = lambda self, key: slicing_ops.getitem(self, key)
    # Defining __eq__ must not make instances hashable: keep the class's refusing __hash__.


def _refuse_in_place(op: str, method: str):
    def refuse(self, other):
        raise RuntimeError(
            f"`variable {op}= value` with `tf.Variable`s is not supported. Use "
            f"`variable.{method}(value)` to modify the variable, or `out = variable {op} "
            "value` if you need to get a new output Tensor."
        )

    return refuse


_install(Tensor)
_install(Variable)
# As TF: augmented assignment on a variable is an error, not a silent rebinding to a tensor.
for _op, _name, _method in (
    ("+", "iadd", "assign_add"),
    ("-", "isub", "assign_sub"),
    ("*", "imul", "assign"),
    ("/", "itruediv", "assign"),
    ("**", "ipow", "assign"),
):
    setattr(Variable, f"__{_name}__", _refuse_in_place(_op, _method))
