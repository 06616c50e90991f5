"""``tf.RaggedTensorSpec``: the type of a ragged tensor (shape with None, dtype, ragged rank).

``ragged_rank`` defaults to ``rank - 1`` (every dimension but the first ragged). A spec of
ragged rank 0 describes a dense tensor: ``tf.data`` gives it to the rows of a ragged-rank-1
tensor (``from_tensor_slices(rt)``), whose elements are then dense Tensors, as in TF.
"""

from __future__ import annotations

from simdist.core import dtypes
from simdist.core.shape import TensorShape, as_shape

__all__ = ["RaggedTensorSpec"]


class RaggedTensorSpec:
    """Describes a ``tf.RaggedTensor``.

    >>> import simdist as tf
    >>> tf.RaggedTensorSpec([None, None], tf.int32)
    RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)
    """

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype")

    def __init__(
        self,
        shape=None,
        dtype=dtypes.float32,
        ragged_rank=None,
        row_splits_dtype=dtypes.int64,
        flat_values_spec=None,
    ) -> None:
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if not isinstance(ragged_rank, int):
            raise TypeError(f"ragged_rank must be an int, got {ragged_rank!r}.")
        if rank is not None and not 0 <= ragged_rank < max(rank, 1):
            raise ValueError(f"ragged_rank must be non-negative and less than the rank {rank}.")
        self._ragged_rank = ragged_rank

    @classmethod
    def from_value(cls, value) -> RaggedTensorSpec:
        return cls(value.shape, value.dtype, value.ragged_rank)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def ragged_rank(self) -> int:
        return self._ragged_rank

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits_dtype

    @property
    def value_type(self):
        from simdist.core.ragged.ragged_tensor import RaggedTensor

        return RaggedTensor

    def is_compatible_with(self, value) -> bool:
        """True for a spec or ragged tensor of this dtype, ragged rank and a compatible shape."""
        return (
            self._dtype == value.dtype
            and getattr(value, "ragged_rank", 0) == self._ragged_rank
            and self._shape.is_compatible_with(value.shape)
        )

    def most_specific_compatible_type(self, other) -> RaggedTensorSpec:
        if (
            not isinstance(other, RaggedTensorSpec)
            or other._dtype != self._dtype
            or (other._ragged_rank != self._ragged_rank)
        ):
            raise ValueError(f"No RaggedTensorSpec fits both {self} and {other}.")
        shape = self._shape.most_specific_compatible_shape(other._shape)
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank)

    def _unbatch(self) -> RaggedTensorSpec:
        return RaggedTensorSpec(self._shape[1:], self._dtype, max(self._ragged_rank - 1, 0))

    def _batch(self, size) -> RaggedTensorSpec:
        shape = TensorShape([size]).concatenate(self._shape)
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank + 1)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, RaggedTensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and self._ragged_rank == other._ragged_rank
        )

    def __hash__(self) -> int:
        return hash((self._shape, self._dtype, self._ragged_rank))

    def __repr__(self) -> str:
        return (
            f"RaggedTensorSpec({self._shape!r}, {self._dtype!r}, {self._ragged_rank}, "
            f"{self._row_splits_dtype!r})"
        )
