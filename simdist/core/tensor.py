"""``Tensor``: an immutable NumPy array with a TF dtype and the device it lives on.

Tensors are created by ops (``constant``, ``matmul``...), never mutated. Each carries a
process-unique id that the gradient tape uses to follow it through recorded ops.
Arithmetic operators are attached by ``simdist.core.overloads``.
"""

from __future__ import annotations

import itertools

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.device import current_device
from simdist.core.shape import TensorShape

__all__ = ["Tensor", "make_tensor", "new_id"]

new_id = itertools.count(1).__next__  # atomic under the GIL: safe from replica threads


class Tensor:
    """An immutable, device-placed array (TF's eager ``tf.Tensor``).

    >>> import simdist as tf
    >>> tf.constant([[1], [2]])
    <tf.Tensor: shape=(2, 1), dtype=int32, numpy=
    array([[1],
           [2]], dtype=int32)>
    """

    # _keras_mask: the Keras mask a layer attached (keras.engine.masking); unset otherwise
    __slots__ = ("_value", "_dtype", "_device", "_id", "_keras_mask", "__weakref__")
    __array_priority__ = 100  # NumPy defers `ndarray + Tensor` to Tensor.__radd__

    def __init__(self, value: np.ndarray, dtype: dtypes.DType, device: str) -> None:
        # Internal: use make_tensor / constant / convert_to_tensor.
        value.flags.writeable = False
        self._value = value
        self._dtype = dtype
        self._device = device
        self._id = new_id()

    # --- what a tensor is -------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._value.shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def device(self) -> str:
        return self._device

    def numpy(self):
        """A NumPy copy of the value (a NumPy scalar for a rank-0 tensor)."""
        if self._value.ndim == 0:
            return self._value[()]
        return self._value.copy()

    def __array__(self, dtype=None, copy=None):
        if dtype is None:
            return self._value if not copy else self._value.copy()
        return self._value.astype(dtype)

    def ref(self) -> _Ref:
        """A hashable reference to this tensor, for use as a dict key or set member."""
        return _Ref(self)

    experimental_ref = ref

    # --- Python protocol ----------------------------------------------------------------
    def __hash__(self) -> int:
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __bool__(self) -> bool:
        if self._value.size != 1:
            raise ValueError(
                f"The truth value of a tensor of shape {self.shape} is ambiguous; reduce it "
                "first (tf.reduce_any / tf.reduce_all) or compare a scalar."
            )
        return bool(self._value)

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("len() of a scalar tensor (shape ()) is undefined.")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        from simdist.core.ops import array_ops

        return (array_ops.gather_row(self, i) for i in range(self._value.shape[0]))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __index__(self) -> int:
        if not self._dtype.is_integer:
            raise TypeError(
                f"Only integer tensors can be used as an index, not {self._dtype.name}."
            )
        return int(self._scalar("index"))

    def __format__(self, spec: str) -> str:
        # As TF: format the NumPy value, so "{}".format(loss) prints 0.5106383562088013.
        return self.numpy().__format__(spec)

    def __repr__(self) -> str:
        return (
            f"<tf.Tensor: shape={self.shape}, dtype={self._dtype.name}, "
            f"numpy={_numpy_text(self._value, is_repr=True)}>"
        )

    def __str__(self) -> str:
        return (
            f"tf.Tensor({_numpy_text(self._value, is_repr=False)}, shape={self.shape}, "
            f"dtype={self._dtype.name})"
        )

    def __reduce__(self):
        return _rebuild, (self.numpy(), self._dtype.name, self._device)

    def _scalar(self, what: str):
        if self._value.size != 1:
            raise TypeError(
                f"Only tensors with one element can be converted to Python {what}s; this one "
                f"has shape {self.shape}."
            )
        return self._value.reshape(())[()]


class _Ref:
    """Hashable handle on a tensor or variable: ``x.ref()``; ``deref()`` gives it back."""

    __slots__ = ("_obj",)

    def __init__(self, obj) -> None:
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Ref) and other._obj is self._obj

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


def _numpy_text(value: np.ndarray, is_repr: bool) -> str:
    scalar = value[()] if value.ndim == 0 else value
    text = repr(scalar) if is_repr else str(scalar)
    if is_repr and value.ndim == 0:
        text = str(scalar)  # TF shows numpy=1.0, not np.float32(1.0)
    if "\n" in text:
        text = "\n" + text
    return text


def _rebuild(value, dtype_name: str, device: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype_name)
    return Tensor(np.array(value, dtype=dtype.as_numpy_dtype), dtype, device)


def make_tensor(value, dtype: dtypes.DType | None = None, device: str | None = None) -> Tensor:
    """Wrap an op's NumPy result as a Tensor on the current device (internal).

    The array is frozen (made read-only), not copied: ops pass arrays they own or read-only
    views of other tensors. User arrays enter through ``constant``/``convert_to_tensor``,
    which copy. Passing ``dtype`` casts when the array's dtype differs.
    """
    arr = np.asarray(value)
    if dtype is None:
        dtype = dtypes.as_dtype(arr.dtype)
    elif arr.dtype != dtype._np:
        arr = arr.astype(dtype._np)
    return Tensor(arr, dtype, device or current_device())


def check_same_dtype(op_name: str, *tensors: Tensor) -> dtypes.DType:
    """TF never promotes between tensor dtypes: all inputs of ``op_name`` must agree.

    Raises:
        InvalidArgumentError: two inputs have different dtypes.
    """
    first = tensors[0]._dtype
    for i, t in enumerate(tensors[1:], start=1):
        if t._dtype != first:
            raise errors.InvalidArgumentError(
                f"cannot compute {op_name} as input #{i}(zero-based) was expected to be a "
                f"{_kernel_name(first)} tensor but is a {_kernel_name(t._dtype)} tensor; cast "
                "one side with tf.cast first."
            )
    return first


_KERNEL_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _kernel_name(dtype: dtypes.DType) -> str:
    """The dtype's name as TF's runtime writes it in errors (``float``, ``double``)."""
    return _KERNEL_NAMES.get(dtype.name, dtype.name)
