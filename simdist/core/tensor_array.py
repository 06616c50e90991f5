"""``TensorArray``: a list of same-dtype tensors, written and read by index (TF's eager one).

simdist follows TF's *eager* TensorArray, which is a mutable list: ``write`` stores the
tensor and returns the array itself, so ``ta = ta.write(i, x)`` (the form TF's guides use,
needed in graphs) and a bare ``ta.write(i, x)`` both work. The rules, as TF's:

* ``size`` entries, fixed unless ``dynamic_size=True`` (then a write past the end grows it);
  an index out of range is an OutOfRangeError, a negative one too.
* every element has the array's dtype (a Python number is converted to it; a tensor of
  another dtype is an InvalidArgumentError) and a shape compatible with ``element_shape``,
  which the first write fixes when ``infer_shape`` (the default) and none was given.
* ``clear_after_read`` (default True): ``read(i)`` empties entry ``i``, and a second read
  of it is an InvalidArgumentError; pass ``clear_after_read=False`` to read twice. Inside
  ``tf.function`` TF builds a TensorList-backed array that ignores the flag (its guide's
  ``fibonacci`` reads each entry twice), so an array created there never clears.
* an entry never written reads (and stacks) as zeros of ``element_shape`` (a ValueError
  while that shape is not fully known).

Gradients flow through what is stored: ``read`` returns the stored tensor and ``stack``,
``gather`` and ``concat`` are ``tf.stack`` / ``tf.concat`` of the entries, so a tape
differentiates through them as through any op.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.function import inside_function
from simdist.core.ops import array_ops, creation_ops
from simdist.core.shape import TensorShape
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["TensorArray"]


def _index(index, what: str) -> int:
    value = convert_to_tensor(index)._value if not isinstance(index, int) else index
    value = int(value)
    if value < 0:
        raise errors.OutOfRangeError(f"{what} negative indices (index {value}) is not allowed.")
    return value


class TensorArray:
    """A list of tensors of one dtype (``tf.TensorArray``; see the module docstring).

    >>> import simdist as tf
    >>> ta = tf.TensorArray(tf.float32, size=2)
    >>> ta = ta.write(0, 1.0).write(1, 2.0)
    >>> ta.stack().numpy()
    array([1., 2.], dtype=float32)
    """

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size=None,
        clear_after_read=None,
        tensor_array_name=None,
        handle=None,
        flow=None,
        infer_shape=True,
        element_shape=None,
        colocate_with_first_write_call=True,
        name=None,
    ) -> None:
        if size is None:
            raise ValueError(
                "Size must be declared for TensorArrays when eager execution is enabled; pass "
                "size=0 with dynamic_size=True for one that grows."
            )
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        if inside_function():  # TF's graph TensorArray (a TensorList) never clears
            self._clear_after_read = False
        else:
            self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        self._element_shape = TensorShape(element_shape)
        count = 0 if size is None else int(convert_to_tensor(size)._value)
        self._entries: list[Tensor | None] = [None] * count
        self._cleared: set[int] = set()

    # --- what it is ---------------------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    def size(self, name=None) -> Tensor:
        """The number of entries, an int32 scalar."""
        return make_tensor(np.asarray(len(self._entries), np.int32), dtypes.int32)

    def __repr__(self) -> str:
        return (
            f"<TensorArray dtype={self._dtype.name} size={len(self._entries)} "
            f"element_shape={self._element_shape}>"
        )

    # --- writing ------------------------------------------------------------------------
    def _convert(self, value) -> Tensor:
        tensor = convert_to_tensor(value, dtype_hint=self._dtype)
        if tensor.dtype != self._dtype:
            raise errors.InvalidArgumentError(
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                f"{tensor.dtype.name}; tf.cast the value first."
            )
        if not self._element_shape.is_compatible_with(tensor.shape):
            raise ValueError(
                f"Incompatible shape for value ({tensor.shape}), expected "
                f"({self._element_shape}); every element of a TensorArray has one shape "
                "(pass element_shape=None and infer_shape=False to mix them)."
            )
        if self._infer_shape:
            self._element_shape = self._element_shape.merge_with(tensor.shape)
        return tensor

    def _store(self, index: int, tensor: Tensor) -> None:
        size = len(self._entries)
        if index >= size:
            if not self._dynamic_size:
                raise errors.OutOfRangeError(
                    f"Tried to write to index {index} but array is not resizeable and size "
                    f"is: {size}; create it with dynamic_size=True to let it grow."
                )
            self._entries.extend([None] * (index - size + 1))
        self._entries[index] = tensor
        self._cleared.discard(index)

    def write(self, index, value, name=None) -> TensorArray:
        """Store ``value`` at ``index``; returns this array.

        Raises:
            OutOfRangeError: a negative index, or one past a fixed size.
            InvalidArgumentError: a value of another dtype.
            ValueError: a value whose shape does not fit ``element_shape``.
        """
        index = _index(index, "Writing to")
        self._store(index, self._convert(value))
        return self

    def unstack(self, value, name=None) -> TensorArray:
        """Replace the entries with the rows of ``value`` (along axis 0); returns this array.

        Raises:
            ValueError: more rows than a fixed size holds.
        """
        rows = array_ops.unstack(convert_to_tensor(value, dtype_hint=self._dtype))
        if len(rows) > len(self._entries) and not self._dynamic_size:
            raise ValueError(
                f"Cannot unstack {len(rows)} tensors into a TensorArray of static size "
                f"{len(self._entries)}."
            )
        self._entries = [self._convert(row) for row in rows]
        self._cleared = set()
        return self

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Write the rows of ``value`` at ``indices``; returns this array."""
        rows = array_ops.unstack(convert_to_tensor(value, dtype_hint=self._dtype))
        positions = np.asarray(convert_to_tensor(indices)._value).reshape(-1)
        for position, row in zip(positions, rows, strict=True):
            self._store(_index(int(position), "Writing to"), self._convert(row))
        return self

    # --- reading ------------------------------------------------------------------------
    def _zeros(self) -> Tensor:
        if not self._element_shape.is_fully_defined():
            raise ValueError(
                f"Cannot convert a partially known TensorShape {self._element_shape} to a "
                "Tensor: a TensorArray entry was never written, and without a fully defined "
                "element_shape there is no shape to make its zeros of; write it first."
            )
        return creation_ops.zeros(self._element_shape.as_list(), self._dtype)

    def _entry(self, index: int) -> Tensor:
        tensor = self._entries[index]
        if tensor is None:
            tensor = self._entries[index] = self._zeros()
        return tensor

    def read(self, index, name=None) -> Tensor:
        """The entry at ``index`` (zeros if never written).

        Raises:
            OutOfRangeError: a negative index or one past the end.
            InvalidArgumentError: a second read of an entry cleared by the first.
        """
        index = _index(index, "Reading from")
        if index >= len(self._entries):
            raise errors.OutOfRangeError(
                f"Tried to read from index {index} but array size is: {len(self._entries)}."
            )
        if self._entries[index] is None and index in self._cleared:
            raise errors.InvalidArgumentError(
                f"Could not read index {index} twice because it was cleared after a previous "
                "read (perhaps try setting clear_after_read = false?)"
            )
        tensor = self._entry(index)
        if self._clear_after_read:
            self._entries[index] = None
            self._cleared.add(index)
        return tensor

    def stack(self, name=None) -> Tensor:
        """All entries stacked along a new axis 0 (never-written ones as zeros)."""
        if not self._entries:
            shape = [0] + (
                self._element_shape.as_list() if self._element_shape.is_fully_defined() else []
            )
            return make_tensor(np.zeros(shape, self._dtype.as_numpy_dtype), self._dtype)
        return array_ops.stack([self._entry(i) for i in range(len(self._entries))])

    def gather(self, indices, name=None) -> Tensor:
        """The entries at ``indices``, stacked."""
        positions = np.asarray(convert_to_tensor(indices)._value).reshape(-1)
        for position in positions:
            if not 0 <= position < len(self._entries):
                raise errors.OutOfRangeError(
                    f"Tried to gather index {int(position)} but array size is: "
                    f"{len(self._entries)}."
                )
        return array_ops.stack([self._entry(int(p)) for p in positions])

    def concat(self, name=None) -> Tensor:
        """All entries joined along their axis 0 (each must be at least a vector)."""
        entries = [self._entry(i) for i in range(len(self._entries))]
        for i, entry in enumerate(entries):
            if entry.ndim == 0:
                raise errors.InvalidArgumentError(
                    f"Concat saw a scalar shape at index {i} but requires at least vectors."
                )
        if not entries:
            return make_tensor(np.zeros([0], self._dtype.as_numpy_dtype), self._dtype)
        return array_ops.concat(entries, 0)

    def close(self, name=None) -> None:
        """Drop every entry."""
        self._entries.clear()
