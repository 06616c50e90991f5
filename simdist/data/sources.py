"""Source datasets from values: ``from_tensor_slices``, ``from_tensors``, ``range``, generators.

Sources have no input datasets (``_inputs() == []``). A tensor-slice source keeps its
component arrays (``_components``), so a later pass can see what data a pipeline starts from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes, nest
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.shape import TensorShape
from simdist.core.tensor_spec import TensorSpec
from simdist.data import ragged_elements, structure
from simdist.data.dataset import INFINITE, UNKNOWN, Dataset, as_count

__all__ = ["GeneratorDataset", "RangeDataset", "TensorDataset", "TensorSliceDataset"]


class _TensorSliceDataset(Dataset):
    """One element per row of the components (``Dataset.from_tensor_slices``)."""

    def __init__(self, tensors: Any) -> None:
        super().__init__()
        self._structure = structure.normalize(tensors, "from_tensor_slices input")
        self._components = nest.flatten(self._structure)
        sizes = []
        for arr in self._components:
            if arr.ndim == 0:
                raise ValueError(
                    "Unbatching a tensor is only supported for rank >= 1: from_tensor_slices "
                    "needs every component to have a first dimension; use from_tensors for "
                    "a single element."
                )
            sizes.append(arr.shape[0])
        for size in sizes[1:]:
            if size != sizes[0]:
                raise ValueError(
                    f"Dimensions {sizes[0]} and {size} are not compatible: all components of "
                    f"from_tensor_slices must have the same first dimension (got {sizes})."
                )
        self._n = sizes[0] if sizes else 0

    def _compute_element_spec(self) -> Any:
        return structure.unbatch_spec(structure.spec_of(self._structure))

    def _cardinality(self) -> int:
        return self._n

    def _rows(self):
        components = self._components
        if not all(type(c) is np.ndarray for c in components):
            return None  # ragged or sparse rows: batch takes them one at a time
        return self._structure, components, self._n

    def _batches(self, size: int, drop_remainder: bool):
        """Consecutive rows ``size`` at a time, each component one contiguous copy: what
        ``batch`` stacks from the rows one by one (the same bits)."""
        rows = self._rows()
        if rows is None:
            return None
        template, components, n = rows
        stop = n - n % size if drop_remainder else n
        return (
            structure.pack(template, [c[i : i + size].copy() for c in components])
            for i in range(0, stop, size)
        )

    def _iterate(self):
        template, components = self._structure, self._components
        if len(components) == 1 and isinstance(template, np.ndarray) and not is_ragged(template):
            (column,) = components
            for i in range(self._n):
                yield column[i, ...]
            return
        for i in range(self._n):
            yield structure.pack(template, [ragged_elements.row(c, i) for c in components])


class _TensorDataset(Dataset):
    """Exactly one element (``Dataset.from_tensors``)."""

    def __init__(self, tensors: Any) -> None:
        super().__init__()
        self._element = structure.normalize(tensors, "from_tensors input")

    def _compute_element_spec(self) -> Any:
        return structure.spec_of(self._element)

    def _cardinality(self) -> int:
        return 1

    def _iterate(self):
        yield self._element


class _RangeDataset(Dataset):
    """Scalars ``start, start + step, ...`` below ``stop`` (``Dataset.range``).

    ``infinite=True`` (internal) counts forever: ``enumerate``'s counter.
    """

    def __init__(self, *args, output_type=None, infinite: bool = False) -> None:
        super().__init__()
        if not 1 <= len(args) <= 3:
            raise ValueError(
                f"Dataset.range takes 1 to 3 arguments (stop | start, stop[, step]); got "
                f"{len(args)}."
            )
        values = [as_count(a, "range argument") for a in args]
        start, stop, step = (0, values[0], 1) if len(values) == 1 else (*values, 1)[:3]
        if step == 0:
            raise errors.InvalidArgumentError("step must be a non-zero integer.")
        self._range = range(start, stop, step)
        self._infinite = infinite
        self._dtype = dtypes.int64 if output_type is None else dtypes.as_dtype(output_type)

    def _compute_element_spec(self) -> Any:
        return TensorSpec([], self._dtype)

    def _cardinality(self) -> int:
        return INFINITE if self._infinite else len(self._range)

    def _iterate(self):
        np_type = self._dtype.as_numpy_dtype
        if self._infinite:
            value = self._range.start
            while True:
                yield np.array(value, dtype=np_type)
                value += 1
        for value in self._range:
            yield np.array(value, dtype=np_type)


class _GeneratorDataset(Dataset):
    """Elements yielded by a Python generator function (``Dataset.from_generator``)."""

    _not_replayable = "Dataset.from_generator"  # no iterator checkpoint (TF: PyFunc state)

    def __init__(self, generator, output_types, output_shapes, args, output_signature) -> None:
        super().__init__()
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable that returns an iterator.")
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError(
                    "Pass either output_signature or output_types (and output_shapes), not both."
                )
            self._spec = output_signature
        elif output_types is not None:
            self._spec = _specs_from_types(output_types, output_shapes)
        else:
            raise TypeError(
                "from_generator needs output_signature (a nested tf.TensorSpec), or the "
                "deprecated output_types."
            )
        self._generator = generator
        self._args = tuple(args) if args is not None else ()

    def _compute_element_spec(self) -> Any:
        return self._spec

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iterate(self):
        flat_specs = nest.flatten(self._spec)
        for value in self._generator(*self._args):
            if isinstance(value, list) and isinstance(self._spec, tuple):
                value = tuple(value)
            leaves = _flatten_up_to(self._spec, value)
            arrays = [_conform(leaf, spec) for leaf, spec in zip(leaves, flat_specs, strict=True)]
            yield nest.pack_sequence_as(self._spec, arrays)


def _specs_from_types(output_types, output_shapes) -> Any:
    flat_types = nest.flatten(output_types)
    if output_shapes is None:
        flat_shapes = [None] * len(flat_types)
    else:
        flat_shapes = _flatten_up_to(output_types, output_shapes)
    specs = [TensorSpec(TensorShape(s), t) for t, s in zip(flat_types, flat_shapes, strict=True)]
    return nest.pack_sequence_as(output_types, specs)


def _flatten_up_to(template: Any, value: Any) -> list:
    """Leaves of ``value`` at the places of ``template``'s leaves (deeper parts kept whole).

    Raises:
        TypeError: ``value`` does not have ``template``'s structure.
    """
    if isinstance(template, Mapping):
        if not isinstance(value, Mapping) or sorted(value) != sorted(template):
            raise TypeError(f"Expected a dict with keys {sorted(template)}, got {value!r}.")
        return [x for k in sorted(template) for x in _flatten_up_to(template[k], value[k])]
    if isinstance(template, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(template):
            raise TypeError(
                f"`generator` yielded {value!r}, which does not match the expected structure "
                f"{template!r}."
            )
        return [x for t, v in zip(template, value, strict=True) for x in _flatten_up_to(t, v)]
    return [value]


def _conform(leaf: Any, spec: TensorSpec) -> np.ndarray:
    arr = structure.normalize(leaf, "generator output")
    if spec.dtype == dtypes.string:
        if arr.dtype != object:
            raise TypeError(f"`generator` yielded {leaf!r} where a string was expected.")
    else:
        try:
            arr = np.asarray(arr, dtype=spec.dtype.as_numpy_dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"`generator` yielded an element that could not be converted to the expected "
                f"type {spec.dtype.name}: {leaf!r}."
            ) from exc
    if not spec.shape.is_compatible_with(arr.shape):
        raise errors.InvalidArgumentError(
            f"`generator` yielded an element of shape {arr.shape} where an element of shape "
            f"{spec.shape} was expected."
        )
    return arr


# Public names as the rest of simdist refers to them; repr shows TF's underscore names.
TensorSliceDataset = _TensorSliceDataset
TensorDataset = _TensorDataset
RangeDataset = _RangeDataset
GeneratorDataset = _GeneratorDataset
