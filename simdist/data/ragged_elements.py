"""Ragged dataset elements: rows of a ragged tensor, batches of them, and ``ragged_batch``.

A ragged leaf of an element is a ``RaggedTensor``, except a row of a ragged-rank-1 tensor,
which is a dense array whose spec is a ``RaggedTensorSpec`` of ragged rank 0 (TF's rule:
``from_tensor_slices(rt)`` yields dense Tensors). Batching a leaf whose spec is a
``RaggedTensorSpec`` of ragged rank r gives a RaggedTensor of ragged rank r + 1 (rows may have
any length); ``ragged_batch`` first gives each component with an unknown dimension such a
spec (ragged rank: its last unknown axis), so dense elements of different shapes batch too.
Scalars and fully known shapes batch densely, as in TF.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdist.core import nest
from simdist.core.ops import join_ops
from simdist.core.ragged.ragged_spec import RaggedTensorSpec
from simdist.core.ragged.ragged_tensor import RaggedTensor, is_ragged
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.tensor_spec import TensorSpec
from simdist.data.dataset import Dataset

__all__ = ["RaggedBatchDataset", "row", "batch_ragged", "to_ragged_spec"]


def row(leaf, index: int):
    """Row ``index`` of a leaf: an array's, or a ragged tensor's (an array when dense)."""
    if not is_ragged(leaf):
        return leaf[index, ...]
    result = leaf[index]
    return result._value if isinstance(result, Tensor) else result


def _as_ragged(leaf, ragged_rank: int) -> RaggedTensor:
    if is_ragged(leaf):
        return leaf
    return RaggedTensor.from_tensor(make_tensor(leaf), ragged_rank=ragged_rank)


def _concat_rows(parts: list[RaggedTensor]) -> RaggedTensor:
    if is_ragged(parts[0].values):
        values = _concat_rows([p.values for p in parts])
    else:
        values = join_ops.concat([p.values for p in parts], axis=0)
    lengths = np.concatenate([np.diff(p.row_splits._value) for p in parts])
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


def batch_ragged(column: list, spec: RaggedTensorSpec) -> RaggedTensor:
    """One ragged batch of ``column`` (the leaves of one component, as ``spec`` says)."""
    if spec.ragged_rank == 0:
        arrays = [np.asarray(leaf) for leaf in column]
        values = make_tensor(np.concatenate(arrays, axis=0))
        return RaggedTensor.from_row_lengths(values, [a.shape[0] for a in arrays])
    parts = [_as_ragged(leaf, spec.ragged_rank) for leaf in column]
    return RaggedTensor.from_row_lengths(
        _concat_rows(parts), [p._nrows() for p in parts], validate=False
    )


def to_ragged_spec(spec):
    """``ragged_batch``'s view of a component: a spec with an unknown dimension becomes a
    RaggedTensorSpec whose ragged rank is its last unknown axis; others stay as they are."""
    if not isinstance(spec, TensorSpec) or spec.shape.rank is None:
        return spec
    dims = spec.shape.as_list()
    if None not in dims:
        return spec
    last = max(axis for axis, size in enumerate(dims) if size is None)
    return RaggedTensorSpec(spec.shape, spec.dtype, last)


class _RaggedBatchDataset(Dataset):
    """Batches in which components of different shapes become ragged (``ragged_batch``)."""

    def __init__(self, input_dataset: Dataset, batch_size, drop_remainder: bool) -> None:
        from simdist.data.batching import BatchDataset

        super().__init__((input_dataset,))
        self._inner_spec = nest.map_structure(to_ragged_spec, input_dataset.element_spec)
        self._batched = BatchDataset(input_dataset, batch_size, drop_remainder)
        self._batched._spec_override = self._inner_spec

    def _compute_element_spec(self) -> Any:
        return self._batched._compute_element_spec()

    def _cardinality(self) -> int:
        return self._batched._cardinality()

    def _iterate(self):
        return self._batched._iterate()


RaggedBatchDataset = _RaggedBatchDataset
