"""Batching transformations: ``batch``, ``padded_batch`` and ``unbatch``, with TF's rules.

``batch`` stacks consecutive elements (the last, smaller batch is kept unless
``drop_remainder``); its spec's leading dimension is the batch size only when
``drop_remainder=True``, else ``None``. ``unbatch`` is its inverse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes, nest
from simdist.core.shape import TensorShape
from simdist.core.tensor_spec import TensorSpec
from simdist.data import ragged_elements, structure
from simdist.data.dataset import INFINITE, UNKNOWN, Dataset, as_count

__all__ = ["BatchDataset", "PaddedBatchDataset", "UnbatchDataset"]


def _batch_count(n: int, size: int, drop_remainder: bool) -> int:
    if n in (INFINITE, UNKNOWN):
        return n
    return n // size if drop_remainder else -(-n // size)


def _check_batch_size(batch_size) -> int:
    size = as_count(batch_size, "batch_size")
    if size <= 0:
        raise errors.InvalidArgumentError(f"batch_size must be greater than zero, got {size}.")
    return size


class _BatchDataset(Dataset):
    """Consecutive elements stacked along a new first axis (``Dataset.batch``)."""

    # ragged_batch's view of the input's spec (components with unknown dimensions ragged)
    _spec_override: Any = None

    def __init__(self, input_dataset: Dataset, batch_size, drop_remainder: bool) -> None:
        super().__init__((input_dataset,))
        self._batch_size = _check_batch_size(batch_size)
        self._drop_remainder = bool(drop_remainder)

    def _input_spec(self) -> Any:
        if self._spec_override is not None:
            return self._spec_override
        return self._input_datasets[0].element_spec

    def _compute_element_spec(self) -> Any:
        size = self._batch_size if self._drop_remainder else None
        return structure.batch_spec(self._input_spec(), size)

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        return _batch_count(n, self._batch_size, self._drop_remainder)

    def _iterate(self):
        spec = self._input_spec()
        if self._spec_override is None:  # ragged_batch's view needs the rows one by one
            whole = self._input_datasets[0]._batches(self._batch_size, self._drop_remainder)
            if whole is not None:  # a slices source, or a shuffle of one: no row by row
                yield from whole
                return
        buffer: list = []
        for element in self._input_datasets[0]._iterate():
            buffer.append(element)
            if len(buffer) == self._batch_size:
                yield structure.stack_elements(buffer, spec)
                buffer = []
        if buffer and not self._drop_remainder:
            yield structure.stack_elements(buffer, spec)


class _PaddedBatchDataset(Dataset):
    """Batches whose components are padded to a common shape (``Dataset.padded_batch``).

    ``padded_shapes`` defaults to the input's shapes with unknown dimensions padded to the
    longest in each batch; ``padding_values`` default to 0 (``b""`` for strings).
    """

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values, drop) -> None:
        super().__init__((input_dataset,))
        self._batch_size = _check_batch_size(batch_size)
        self._drop_remainder = bool(drop)
        spec = input_dataset.element_spec
        flat_specs = nest.flatten(spec)
        for leaf in flat_specs:
            if not isinstance(leaf, TensorSpec):
                raise TypeError(
                    "`padded_batch` is only supported for datasets that produce tensor elements "
                    "but type spec of elements in the input dataset is not a subclass of "
                    f"TensorSpec: `{leaf!r}`. Use ragged_batch for ragged elements."
                )
        if padded_shapes is None:
            shapes = [s.shape for s in flat_specs]
        else:
            shapes = [TensorShape(s) for s in _flatten_shapes(spec, padded_shapes)]
        for s, shape in zip(flat_specs, shapes, strict=True):
            if s.shape.rank is not None and shape.rank != s.shape.rank:
                raise ValueError(
                    f"The padded shape {shape} is not compatible with the shape {s.shape} of "
                    "the corresponding input component (ranks differ)."
                )
        if padding_values is None:
            pads = [b"" if s.dtype == dtypes.string else 0 for s in flat_specs]
        else:
            pads = nest.flatten(padding_values)
        self._shapes = shapes
        self._pads = [
            np.array(v.numpy() if hasattr(v, "numpy") else v, dtype=s.dtype.as_numpy_dtype)
            for v, s in zip(pads, flat_specs, strict=True)
        ]

    def _compute_element_spec(self) -> Any:
        size = self._batch_size if self._drop_remainder else None
        spec = self._input_datasets[0].element_spec
        padded = [
            type(s)(TensorShape([size]).concatenate(shape), s.dtype)
            for s, shape in zip(nest.flatten(spec), self._shapes, strict=True)
        ]
        return nest.pack_sequence_as(spec, padded)

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        return _batch_count(n, self._batch_size, self._drop_remainder)

    def _pad(self, buffer: list):
        flats = [nest.flatten(e) for e in buffer]
        out = []
        for i, (shape, pad) in enumerate(zip(self._shapes, self._pads, strict=True)):
            column = [f[i] for f in flats]
            longest = np.max([a.shape for a in column], axis=0) if column[0].ndim else ()
            target = tuple(int(m) if d is None else d for d, m in zip(shape, longest, strict=True))
            batch = np.full((len(column), *target), pad, dtype=column[0].dtype)
            for j, a in enumerate(column):
                if any(x > t for x, t in zip(a.shape, target, strict=True)):
                    raise errors.InvalidArgumentError(
                        f"Attempted to pad to a smaller size than the input element: "
                        f"component {i} has shape {list(a.shape)}, padded shape {list(target)}."
                    )
                batch[(j, *(slice(0, x) for x in a.shape))] = a
            out.append(batch)
        return nest.pack_sequence_as(buffer[0], out)

    def _iterate(self):
        buffer: list = []
        for element in self._input_datasets[0]._iterate():
            buffer.append(element)
            if len(buffer) == self._batch_size:
                yield self._pad(buffer)
                buffer = []
        if buffer and not self._drop_remainder:
            yield self._pad(buffer)


def _flatten_shapes(spec: Any, shapes: Any) -> list:
    """``padded_shapes`` leaves (each a shape: list, tuple or TensorShape) in spec order."""
    if isinstance(spec, Mapping):
        return [x for k in sorted(spec) for x in _flatten_shapes(spec[k], shapes[k])]
    if isinstance(spec, tuple):
        if len(shapes) != len(spec):
            raise ValueError(f"padded_shapes {shapes!r} does not match the element structure.")
        return [x for s, p in zip(spec, shapes, strict=True) for x in _flatten_shapes(s, p)]
    return [shapes]


class _UnbatchDataset(Dataset):
    """Each element split along its first dimension (``Dataset.unbatch``)."""

    def __init__(self, input_dataset: Dataset) -> None:
        super().__init__((input_dataset,))
        self._spec = structure.unbatch_spec(input_dataset.element_spec)

    def _compute_element_spec(self) -> Any:
        return self._spec

    def _cardinality(self) -> int:
        parent = self._input_datasets[0]
        n = parent._cardinality()
        if n in (INFINITE, UNKNOWN):
            return n
        dims = {s.shape[0] for s in nest.flatten(parent.element_spec)}
        if len(dims) == 1 and None not in dims:
            return n * dims.pop()
        return UNKNOWN

    def _iterate(self):
        for element in self._input_datasets[0]._iterate():
            flat = structure.flatten(element)
            sizes = [a.shape[0] for a in flat]
            if any(s != sizes[0] for s in sizes):
                raise errors.InvalidArgumentError(
                    f"Input element must have the same batch size in each component. "
                    f"Component 0 had size {sizes[0]} but another component had sizes {sizes}."
                )
            for i in range(sizes[0]):
                yield structure.pack(element, [ragged_elements.row(a, i) for a in flat])


BatchDataset = _BatchDataset
PaddedBatchDataset = _PaddedBatchDataset
UnbatchDataset = _UnbatchDataset
