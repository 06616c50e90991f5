"""A ``SparseTensor`` inside a dataset element: its NumPy parts, its spec, and batching.

Dataset elements hold NumPy arrays at their leaves (:mod:`simdist.data.structure`); a
``SparseTensor`` leaf (a ``VarLenFeature`` parsed in ``map``) is held as a
:class:`SparseValue` of three arrays, described by a ``SparseTensorSpec``, handed to the
user as a ``SparseTensor``, and batched as TF batches sparse components: each element's
indices get the element's position in front, and the batch's dense shape is the batch size
followed by the largest size of each dimension. Its spec keeps the rank and leaves the
dimensions unknown. ``as_numpy_iterator`` gives the
``SparseValue`` itself (TF gives a ``SparseTensorValue`` with the same three fields).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.shape import TensorShape
from simdist.core.sparse import SparseTensor, SparseTensorSpec
from simdist.core.tensor import make_tensor

__all__ = ["SparseValue", "stack_sparse"]


class SparseValue:
    """The NumPy parts of a sparse dataset component: ``indices`` (int64 ``[N, rank]``),
    ``values`` (``[N]``) and ``dense_shape`` (int64 ``[rank]``)."""

    __slots__ = ("indices", "values", "dense_shape", "dtype")

    def __init__(self, indices: np.ndarray, values: np.ndarray, dense_shape: np.ndarray,
                 dtype: dtypes.DType) -> None:  # fmt: skip
        self.indices = indices
        self.values = values
        self.dense_shape = dense_shape
        self.dtype = dtype

    @classmethod
    def from_tensor(cls, value: SparseTensor) -> SparseValue:
        return cls(value.indices.numpy(), value.values.numpy(), value.dense_shape.numpy(),
                   value.dtype)  # fmt: skip

    def to_tensor(self, device: str) -> SparseTensor:
        return SparseTensor(
            make_tensor(self.indices, device=device),
            make_tensor(self.values, dtype=self.dtype, device=device),
            make_tensor(self.dense_shape, device=device),
        )

    def spec(self) -> SparseTensorSpec:
        """Rank and dtype; the dimensions unknown, as a parsing op's sparse result has them
        in TF's graph (``SparseTensorSpec(TensorShape([None]), tf.int64)``)."""
        return SparseTensorSpec([None] * len(self.dense_shape), self.dtype)

    @classmethod
    def stand_in(cls, spec: SparseTensorSpec, unknown_size: int) -> SparseValue:
        """An empty sparse value fitting ``spec`` (unknown dimensions ``unknown_size``)."""
        rank = spec.shape.rank or 0
        shape = [unknown_size if d is None else d for d in (spec.shape.as_list() if rank else [])]
        empty = np.empty(0, dtype=object if spec.dtype == dtypes.string else spec.dtype._np)
        return cls(np.zeros((0, rank), np.int64), empty, np.asarray(shape, np.int64), spec.dtype)

    def __repr__(self) -> str:
        return (
            f"SparseTensorValue(indices={self.indices!r}, values={self.values!r}, "
            f"dense_shape={self.dense_shape!r})"
        )


def batch_spec(spec: SparseTensorSpec, size: int | None) -> SparseTensorSpec:
    return SparseTensorSpec(TensorShape([size]).concatenate(spec.shape), spec.dtype)


def unbatch_spec(spec: SparseTensorSpec) -> SparseTensorSpec:
    raise errors.UnimplementedError(
        "simdist cannot unbatch a dataset with SparseTensor components; use "
        "tf.sparse.to_dense in a map first."
    )


def stack_sparse(column: list[SparseValue]) -> SparseValue:
    """One batch of sparse values (see the module docstring).

    Raises:
        InvalidArgumentError: the values differ in rank.
    """
    ranks = {len(v.dense_shape) for v in column}
    if len(ranks) > 1:
        raise errors.InvalidArgumentError(
            f"Cannot batch SparseTensors of different ranks: {sorted(ranks)}."
        )
    rank = ranks.pop()
    indices = [
        np.concatenate([np.full((len(v.indices), 1), b, np.int64), v.indices.reshape(-1, rank)],
                       axis=1)
        for b, v in enumerate(column)
    ]  # fmt: skip
    shape = np.max(np.stack([v.dense_shape for v in column]), axis=0) if rank else []
    values = np.concatenate([v.values for v in column])
    return SparseValue(
        np.concatenate(indices).reshape(-1, rank + 1),
        values,
        np.asarray([len(column), *list(shape)], np.int64),
        column[0].dtype,
    )
