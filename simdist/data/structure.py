"""Dataset elements: nested NumPy structures, their ``TensorSpec``s, and conversions.

Inside a pipeline an element is a nested structure of tuples, dicts and namedtuples whose
leaves are NumPy arrays (strings: object arrays of ``bytes``). As in ``tf.data`` (and unlike
``tf.nest``), a Python *list* is not a structure: it is a value that becomes one tensor.
Dicts are flattened in sorted key order and rebuilt with their own key order.

The element's type is its ``element_spec``: the same structure with a ``TensorSpec`` per
leaf. Users see elements as ``simdist`` Tensors placed on the host CPU.

A leaf may also be a dataset (``Dataset.window``'s elements): it stays a dataset, its spec is
a ``DatasetSpec``; it cannot be read as NumPy (as in TF) nor batched (TF can).

A leaf may also be a ``RaggedTensor`` (its spec a ``RaggedTensorSpec``): it stays one, is read
as NumPy by its ``numpy()`` and batched into a ragged tensor one ragged rank up
(``ragged_elements``).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes, nest
from simdist.core.convert import convert_to_tensor
from simdist.core.device import canonical_name, current_device
from simdist.core.ragged.ragged_spec import RaggedTensorSpec
from simdist.core.ragged.ragged_tensor import RaggedTensor, is_ragged
from simdist.core.shape import TensorShape
from simdist.core.sparse import SparseTensor, SparseTensorSpec
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.tensor_spec import TensorSpec
from simdist.data import sparse_element
from simdist.data.dataset_spec import DatasetSpec
from simdist.data.sparse_element import SparseValue

__all__ = [
    "batch_spec",
    "dummy_element",
    "flatten",
    "host_device",
    "most_specific_spec",
    "normalize",
    "pack",
    "spec_of",
    "stack_elements",
    "to_numpy",
    "to_tensors",
    "unbatch_spec",
]


def _is_structure(value: Any) -> bool:
    return isinstance(value, (tuple, Mapping))


def normalize(value: Any, what: str = "element") -> Any:
    """Turn a user value into a dataset element (nested NumPy arrays).

    Tuples, namedtuples and dicts are structure; everything else (tensors, variables,
    NumPy arrays, Python numbers, strings and lists) becomes one array with TF's dtype rules
    (Python float -> float32, int -> int32, NumPy dtypes kept, str -> bytes).

    Raises:
        TypeError: a leaf cannot become a tensor (``None``, an arbitrary object).
    """
    if isinstance(value, Mapping):
        items = {k: normalize(value[k], what) for k in value}
        return (
            collections.OrderedDict(items) if isinstance(value, collections.OrderedDict) else items
        )
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(normalize(v, what) for v in value))
    if isinstance(value, tuple):
        return tuple(normalize(v, what) for v in value)
    if isinstance(value, SparseTensor):
        return SparseValue.from_tensor(value)
    return _leaf_array(value, what)


def _is_dataset(value: Any) -> bool:
    return getattr(type(value), "_is_dataset", False)


def _leaf_array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, Tensor):
        return value._value
    if _is_dataset(value) or is_ragged(value):
        return value
    if hasattr(value, "_to_tensor"):
        return value._to_tensor(None)._value
    if value is None:
        raise TypeError(
            f"A dataset {what} cannot contain None: every component must be a tensor or "
            "something convertible to one."
        )
    if isinstance(value, list) and any(isinstance(v, (Tensor, list)) for v in value):
        parts = [_leaf_array(v, what) for v in value]
        try:
            return np.stack(parts) if parts else np.zeros((0,), np.float32)
        except ValueError as exc:
            raise ValueError(f"Cannot make one tensor of a ragged list in the {what}.") from exc
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "US":
        return _as_bytes(np.asarray(value).astype(object))
    try:
        arr = convert_to_tensor(value)._value
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"Cannot convert {value!r} (of type {type(value).__name__}) in the dataset {what} "
            "to a tensor."
        ) from exc
    return _as_bytes(arr) if arr.dtype == object else arr


def _as_bytes(arr: np.ndarray) -> np.ndarray:
    """Strings in TF tensors are bytes: encode ``str`` items as UTF-8."""
    flat = [v.encode("utf-8") if isinstance(v, str) else v for v in arr.ravel().tolist()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(arr.shape)


def flatten(element: Any) -> list:
    """``tf.nest.flatten`` of an element, with a fast path for arrays and flat tuples."""
    if isinstance(element, np.ndarray):
        return [element]
    if type(element) is tuple and all(type(c) is np.ndarray for c in element):
        return list(element)
    return nest.flatten(element)


def pack(template: Any, leaves: list) -> Any:
    """``tf.nest.pack_sequence_as``, with a fast path for arrays and flat tuples."""
    if isinstance(template, np.ndarray):
        return leaves[0]
    if type(template) is tuple and all(type(c) is np.ndarray for c in template):
        return tuple(leaves)
    return nest.pack_sequence_as(template, leaves)


def spec_of(element: Any) -> Any:
    """The ``TensorSpec`` structure describing ``element``."""

    def leaf(a):
        if isinstance(a, SparseValue):
            return a.spec()
        if _is_dataset(a):
            return DatasetSpec(a.element_spec)
        if is_ragged(a):
            return RaggedTensorSpec.from_value(a)
        return TensorSpec(a.shape, dtypes.as_dtype(a.dtype))

    return nest.map_structure(leaf, element)


def host_device() -> str:
    """The host CPU of the current device scope (where dataset elements live)."""
    return canonical_name("CPU:0", current_device())


def to_tensors(element: Any, device: str | None = None) -> Any:
    """Wrap each NumPy leaf as a Tensor on ``device`` (the host CPU by default)."""
    device = device or host_device()

    def leaf(a):
        if isinstance(a, SparseValue):
            return a.to_tensor(device)
        if _is_dataset(a) or is_ragged(a):
            return a
        return make_tensor(a, device=device)

    return nest.map_structure(leaf, element)


def to_numpy(element: Any) -> Any:
    """Leaves as ``Tensor.numpy()`` gives them: NumPy scalars for rank 0, else copies.

    Raises:
        TypeError: a leaf is a dataset (``as_numpy_iterator`` of ``window``'s elements).
    """

    def leaf(a):
        if isinstance(a, SparseValue):
            return a
        if _is_dataset(a):
            raise TypeError(
                "`tf.data.Dataset.as_numpy_iterator()` is not supported for datasets that "
                "produce datasets (Dataset.window's elements): iterate each window, or "
                "flat_map(lambda w: w.batch(size)) first."
            )
        if is_ragged(a):
            return a.numpy()
        return a[()] if a.ndim == 0 else a.copy()

    return nest.map_structure(leaf, element)


def batch_spec(spec: Any, size: int | None) -> Any:
    """Each leaf spec with a new leading dimension ``size`` (None when unknown)."""

    def add(s):
        if isinstance(s, SparseTensorSpec):
            return sparse_element.batch_spec(s, size)
        if isinstance(s, RaggedTensorSpec):
            return s._batch(size)
        return TensorSpec(TensorShape([size]).concatenate(s.shape), s.dtype)

    return nest.map_structure(add, spec)


def unbatch_spec(spec: Any) -> Any:
    """Each leaf spec without its leading dimension.

    Raises:
        ValueError: a component is a scalar (nothing to unbatch).
    """

    def drop(s: TensorSpec) -> TensorSpec:
        if isinstance(s, SparseTensorSpec):
            return sparse_element.unbatch_spec(s)
        if isinstance(s, RaggedTensorSpec):
            return s._unbatch()
        if s.shape.rank == 0:
            raise ValueError("Cannot unbatch an input with scalar components.")
        return TensorSpec(s.shape[1:] if s.shape.rank is not None else None, s.dtype)

    return nest.map_structure(drop, spec)


def most_specific_spec(a: Any, b: Any, what: str = "dataset elements") -> Any:
    """The spec that both ``a`` and ``b`` fit (differing dimensions become None).

    Raises:
        TypeError: the structures or dtypes differ.
    """
    try:
        nest.assert_same_structure(a, b)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Incompatible {what}:\n  {a}\nvs.\n  {b}") from exc
    flat_a, flat_b = nest.flatten(a), nest.flatten(b)
    if any(type(x) is not type(y) for x, y in zip(flat_a, flat_b, strict=True)):
        raise TypeError(f"Incompatible {what} (a dataset and a tensor):\n  {a}\nvs.\n  {b}")
    if any(
        getattr(x, "dtype", None) != getattr(y, "dtype", None)
        for x, y in zip(flat_a, flat_b, strict=True)
    ):
        raise TypeError(f"Incompatible {what} (dtypes differ):\n  {a}\nvs.\n  {b}")
    return nest.map_structure(lambda x, y: x.most_specific_compatible_type(y), a, b)


def dummy_element(spec: Any, unknown_size: int, fill: int = 1) -> Any:
    """An element fitting ``spec``: ``fill`` everywhere (strings: ``fill - 1`` x ``b"a"``,
    bools: True); unknown dimensions take ``unknown_size``."""

    def make(s: TensorSpec) -> np.ndarray:
        if isinstance(s, SparseTensorSpec):
            return SparseValue.stand_in(s, unknown_size)
        if isinstance(s, DatasetSpec):  # a window: one stand-in element
            from simdist.data.windowing import ElementsDataset

            return ElementsDataset(
                [dummy_element(s.element_spec, unknown_size, fill)], s.element_spec
            )
        shape = (
            () if s.shape.rank is None else tuple(unknown_size if d is None else d for d in s.shape)
        )
        if isinstance(s, RaggedTensorSpec) and s.ragged_rank > 0:
            dense = make(TensorSpec(s.shape, s.dtype))
            return RaggedTensor.from_tensor(make_tensor(dense), ragged_rank=s.ragged_rank)
        if s.dtype == dtypes.string:
            return np.full(shape, b"a" * (fill - 1), dtype=object)
        if s.dtype == dtypes.bool:
            return np.ones(shape, dtype=bool)
        return np.full(shape, fill, dtype=s.dtype.as_numpy_dtype)

    return nest.map_structure(make, spec)


def stack_elements(elements: list, spec: Any = None) -> Any:
    """Stack a list of same-structure elements along a new leading axis (one batch); a
    component whose ``spec`` is a ``RaggedTensorSpec`` becomes one ragged batch.

    Raises:
        InvalidArgumentError: two elements have different shapes in one component.
    """
    flats = [flatten(e) for e in elements]
    flat_specs = nest.flatten(spec) if spec is not None else [None] * len(flats[0])
    if any(_is_dataset(leaf) for leaf in flats[0]):
        raise TypeError(
            "Batching datasets of datasets (Dataset.window's elements) is not supported by "
            "simdist: batch inside each window instead, flat_map(lambda w: w.batch(size))."
        )
    stacked = []
    for i, first in enumerate(flats[0]):
        column = [f[i] for f in flats]
        if isinstance(first, SparseValue):
            stacked.append(sparse_element.stack_sparse(column))
            continue
        leaf_spec = flat_specs[i]
        if isinstance(leaf_spec, RaggedTensorSpec) or is_ragged(first):
            from simdist.data import ragged_elements

            if not isinstance(leaf_spec, RaggedTensorSpec):
                leaf_spec = RaggedTensorSpec.from_value(first)
            stacked.append(ragged_elements.batch_ragged(column, leaf_spec))
            continue
        for j, arr in enumerate(column):
            if arr.shape != first.shape:
                raise errors.InvalidArgumentError(
                    f"Cannot batch tensors with different shapes in component {i}. First "
                    f"element had shape {list(first.shape)} and element {j} had shape "
                    f"{list(arr.shape)}. Use padded_batch, or make the shapes equal first."
                )
        stacked.append(np.stack(column))
    return pack(elements[0], stacked)
