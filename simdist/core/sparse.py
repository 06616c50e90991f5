"""``tf.sparse.SparseTensor``: a tensor given by the indices and values of its set entries.

A ``SparseTensor`` of rank ``R`` with ``N`` set entries is three tensors: ``indices``
(int64, ``[N, R]``), ``values`` (``[N]``) and ``dense_shape`` (int64, ``[R]``). Every other
entry is the default (0, ``b""``, False). ``to_dense`` scatters it into a dense tensor,
``from_dense`` keeps a dense tensor's non-default entries in row-major order.

>>> import simdist as tf
>>> sp = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=[7, 8], dense_shape=[3, 2])
>>> tf.sparse.to_dense(sp).numpy().tolist()
[[0, 7], [0, 0], [8, 0]]
>>> tf.sparse.from_dense(tf.constant([[0, 5], [6, 0]])).indices.numpy().tolist()
[[0, 1], [1, 0]]
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["SparseTensor", "SparseTensorSpec", "from_dense", "to_dense"]


class SparseTensor:
    """A sparse tensor (``tf.sparse.SparseTensor``, also ``tf.SparseTensor``).

    Args:
        indices: int64 ``[N, rank]``, the positions of the set entries.
        values: ``[N]``, their values.
        dense_shape: int64 ``[rank]``, the shape of the dense tensor.

    Raises:
        ValueError: the three do not fit together (ranks, counts).
    """

    __slots__ = ("_indices", "_values", "_dense_shape")

    def __init__(self, indices, values, dense_shape) -> None:
        self._indices = _as_int64(indices, "indices")
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = _as_int64(dense_shape, "dense_shape")
        if self._indices.shape.rank != 2:
            raise ValueError(f"Shape {self._indices.shape} must have rank 2 (indices).")
        if self._values.shape.rank != 1:
            raise ValueError(f"Shape {self._values.shape} must have rank 1 (values).")
        if self._dense_shape.shape.rank != 1:
            raise ValueError(f"Shape {self._dense_shape.shape} must have rank 1 (dense_shape).")
        count, rank = self._indices.shape
        if self._values.shape[0] != count:
            raise ValueError(
                f"Dimensions {count} and {self._values.shape[0]} are not compatible: "
                "indices and values must have one row per entry."
            )
        if self._dense_shape.shape[0] != rank:
            raise ValueError(
                f"Dimensions {rank} and {self._dense_shape.shape[0]} are not compatible: "
                "indices' columns and dense_shape's length are the rank."
            )

    @classmethod
    def from_value(cls, value) -> SparseTensor:
        if isinstance(value, SparseTensor):
            return value
        raise TypeError(f"Expected a SparseTensor, got {type(value).__name__}.")

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape([int(d) for d in self._dense_shape.numpy()])

    def get_shape(self) -> TensorShape:
        return self.shape

    def with_values(self, new_values) -> SparseTensor:
        """The same positions holding ``new_values``."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __repr__(self) -> str:
        return (
            f"SparseTensor(indices={str(self._indices)}, values={str(self._values)}, "
            f"dense_shape={str(self._dense_shape)})"
        )


class SparseTensorSpec:
    """The type of a ``SparseTensor``: its dense shape (dimensions may be None) and dtype
    (``tf.SparseTensorSpec``), as a dataset's ``element_spec`` shows it."""

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape=None, dtype=dtypes.float32) -> None:
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)

    @classmethod
    def from_value(cls, value: SparseTensor) -> SparseTensorSpec:
        return cls(value.shape, value.dtype)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def is_compatible_with(self, value) -> bool:
        return self._dtype == value.dtype and self._shape.is_compatible_with(value.shape)

    def most_specific_compatible_type(self, other) -> SparseTensorSpec:
        if not isinstance(other, SparseTensorSpec) or self._dtype != other.dtype:
            raise ValueError(f"No SparseTensorSpec fits both {self} and {other}.")
        return SparseTensorSpec(self._shape.most_specific_compatible_shape(other.shape),
                                self._dtype)  # fmt: skip

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, SparseTensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
        )

    def __hash__(self) -> int:
        return hash((self._shape, self._dtype))

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self._shape!r}, {self._dtype!r})"


def _as_int64(value, what: str) -> Tensor:
    array = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
    if array.size == 0:
        array = array.reshape(array.shape) if array.ndim else array
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"SparseTensor {what} must be integers, got {array.dtype}.")
    return make_tensor(np.ascontiguousarray(array, dtype=np.int64))


def _default(dtype: dtypes.DType, default_value):
    if default_value is not None:
        return np.asarray(
            default_value.numpy() if isinstance(default_value, Tensor) else default_value,
            dtype=dtype.as_numpy_dtype,
        )
    if dtype == dtypes.string:
        return b""
    return np.zeros((), dtype=dtype.as_numpy_dtype)


def to_dense(sp_input: SparseTensor, default_value=None, validate_indices: bool = True,
             name=None) -> Tensor:  # fmt: skip
    """The dense tensor of ``sp_input``, unset entries ``default_value`` (0 by default).

    Raises:
        InvalidArgumentError: an index outside ``dense_shape``; with ``validate_indices``, an
            index repeated or out of row-major order.
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}.")
    shape = tuple(int(d) for d in sp_input.dense_shape.numpy())
    indices = sp_input.indices.numpy()
    values = sp_input.values.numpy()
    dtype = sp_input.dtype
    out = np.empty(shape, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
    out[...] = _default(dtype, default_value)
    previous = None
    for row, index in enumerate(indices.tolist()):
        if any(i < 0 or i >= d for i, d in zip(index, shape, strict=True)):
            raise errors.InvalidArgumentError(
                f"indices[{row}] = {index} is out of bounds: need 0 <= index < {list(shape)}"
            )
        if validate_indices and previous is not None:
            if index == previous:
                raise errors.InvalidArgumentError(f"indices[{row}] = {index} is repeated")
            if index < previous:
                raise errors.InvalidArgumentError(f"indices[{row}] = {index} is out of order")
        previous = index
        out[tuple(index)] = values[row]
    return make_tensor(out, dtype=dtype)


def from_dense(tensor, name=None) -> SparseTensor:
    """The entries of ``tensor`` that are not 0 (or ``b""``), in row-major order."""
    dense = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    array = dense.numpy() if dense.shape.rank else np.asarray(dense.numpy())
    array = np.asarray(array)
    mask = array != b"" if dense.dtype == dtypes.string else array != 0
    indices = np.argwhere(mask).astype(np.int64).reshape(-1, array.ndim)
    values = array[mask] if array.ndim else array.reshape(-1)[mask.reshape(-1)]
    return SparseTensor(
        indices,
        make_tensor(np.asarray(values, dtype=array.dtype), dtype=dense.dtype),
        np.asarray(array.shape, dtype=np.int64),
    )
