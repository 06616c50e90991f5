"""TensorFlow's dtypes over NumPy's, and TF's rules for turning Python values into them.

TF never promotes between tensor dtypes: ``float32 + int32`` is an error, not a float. A
Python scalar or list takes the dtype of the tensor it meets (``x + 1``), and on its own is
``int32`` (``int64`` when it does not fit), ``float32`` or ``bool``. NumPy arrays keep their
dtype (``float64`` stays ``float64``).
"""

from __future__ import annotations

import builtins

import numpy as np

__all__ = [
    "DType",
    "as_dtype",
    "float16",
    "float32",
    "float64",
    "half",
    "double",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "string",
]


class DType:
    """A tensor element type: ``tf.float32`` and friends."""

    __slots__ = ("_name", "_np")

    def __init__(self, name: str, np_dtype) -> None:
        self._name = name
        self._np = np.dtype(np_dtype)

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other) -> bool:
        return self == as_dtype(other)

    def __eq__(self, other) -> bool:
        if other is None:
            return False
        try:
            return self._name == as_dtype(other)._name
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __reduce__(self):
        return as_dtype, (self._name,)


float16 = half = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = double = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
bool = DType("bool", np.bool_)
string = DType("string", np.object_)

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, string)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"half": float16, "double": float64, "float": float32, "int": int32})
_BY_NP = {d._np: d for d in _ALL}


def as_dtype(value) -> DType:
    """Return the DType for a DType, a name (``"float32"``), a NumPy dtype or a scalar type.

    Raises:
        TypeError: the value names no dtype simdist supports.
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is builtins.bool:
        return bool
    if value is None:
        raise TypeError(
            "Cannot convert None to a simdist dtype; pass a dtype such as tf.float32 or 'float32'."
        )
    if value is float:
        return float32
    if value is int:
        return int32
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        np_dtype = None
    if np_dtype is not None:
        if np_dtype.kind in "US":
            return string
        if np_dtype in _BY_NP:
            return _BY_NP[np_dtype]
    raise TypeError(
        f"Cannot convert {value!r} to a simdist dtype; use one of "
        f"{', '.join(sorted(d.name for d in _ALL))}."
    )


def infer_python_dtype(value) -> DType:
    """The dtype TF gives a Python scalar or (nested) list with no dtype asked for.

    bools -> bool; ints -> int32, or int64 when a value does not fit int32; any float ->
    float32; strings -> string.
    """
    arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind == "b":
        return bool
    if kind in "iu":
        if arr.size and (arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max):
            return int64
        return int32
    if kind == "f":
        return float32
    if kind in "USO":
        return string
    raise TypeError(f"Cannot infer a dtype for {value!r} (NumPy kind {kind!r}).")
