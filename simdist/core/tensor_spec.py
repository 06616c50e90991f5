"""``TensorSpec``: the shape and dtype a tensor must have (datasets, function signatures)."""

from __future__ import annotations

from simdist.core import dtypes
from simdist.core.shape import TensorShape, as_shape

__all__ = ["TensorSpec"]


class TensorSpec:
    """Describes a tensor: ``TensorSpec(shape=(None, 28, 28, 1), dtype=tf.float32)``."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=dtypes.float32, name: str | None = None) -> None:
        self._shape = as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name: str | None = None) -> TensorSpec:
        return cls(tensor.shape, tensor.dtype, name)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def name(self) -> str | None:
        return self._name

    def is_compatible_with(self, value) -> bool:
        """True when ``value`` (a tensor or spec) has this dtype and a compatible shape."""
        return self._dtype == value.dtype and self._shape.is_compatible_with(value.shape)

    def most_specific_compatible_type(self, other: TensorSpec) -> TensorSpec:
        if self._dtype != other.dtype:
            raise ValueError(f"No TensorSpec fits both {self} and {other}: dtypes differ.")
        return TensorSpec(self._shape.most_specific_compatible_shape(other.shape), self._dtype)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and self._name == other._name
        )

    def __hash__(self) -> int:
        return hash((self._shape, self._dtype, self._name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, name={self._name!r})"
