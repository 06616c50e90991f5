"""``tf.data.DatasetSpec``: the type of a dataset that is itself a dataset's element.

``Dataset.window`` makes elements that are datasets (one per component of the input's
element); their ``element_spec`` leaf is a ``DatasetSpec`` of the inner dataset's
``element_spec``. Functions given to ``map``, ``flat_map``, ``interleave`` and ``filter``
receive such elements as datasets.
"""

from __future__ import annotations

from typing import Any

from simdist.core.shape import TensorShape

__all__ = ["DatasetSpec"]


class DatasetSpec:
    """The type of a ``tf.data.Dataset`` value: its ``element_spec`` and its shape (``[]``
    for one dataset).

    >>> import simdist as tf
    >>> tf.data.DatasetSpec.from_value(tf.data.Dataset.range(3))
    DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))
    """

    __slots__ = ("_element_spec", "_dataset_shape")

    def __init__(self, element_spec: Any, dataset_shape=()) -> None:
        self._element_spec = element_spec
        self._dataset_shape = TensorShape(dataset_shape)

    @staticmethod
    def from_value(value: Any) -> DatasetSpec:
        """The spec of the dataset ``value``."""
        return DatasetSpec(value.element_spec)

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @property
    def shape(self) -> TensorShape:
        return self._dataset_shape

    @property
    def value_type(self) -> type:
        from simdist.data.dataset import Dataset  # the same floor and package

        return Dataset

    def most_specific_compatible_type(self, other: Any) -> DatasetSpec:
        """The spec both fit (as ``TensorSpec``'s, leaf by leaf).

        Raises:
            TypeError: ``other`` is not a ``DatasetSpec`` of the same structure and dtypes.
        """
        from simdist.data import structure

        if not isinstance(other, DatasetSpec):
            raise TypeError(f"Incompatible types: {self} and {other}.")
        inner = structure.most_specific_spec(
            self._element_spec, other._element_spec, "window datasets"
        )
        return DatasetSpec(inner, self._dataset_shape)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DatasetSpec)
            and self._element_spec == other._element_spec
            and self._dataset_shape == other._dataset_shape
        )

    def __hash__(self) -> int:
        return hash((DatasetSpec, repr(self._element_spec)))

    def __repr__(self) -> str:
        return f"DatasetSpec({self._element_spec!r}, {self._dataset_shape!r})"
