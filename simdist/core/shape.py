"""``TensorShape``: a possibly partially known shape, as TF prints and compares it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["TensorShape", "as_shape"]


class TensorShape:
    """A shape whose rank or dimensions may be unknown (``None``).

    >>> TensorShape([None, 28, 28, 1])
    TensorShape([None, 28, 28, 1])
    >>> TensorShape([None, 3]).is_compatible_with([5, 3])
    True
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Iterable[int | None] | None) -> None:
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            out = []
            for d in dims:
                if d is not None:
                    d = int(d)
                    if d < 0:
                        raise ValueError(f"Dimension {d} must be >= 0 or None.")
                out.append(d)
            self._dims = tuple(out)

    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> list[int | None] | None:
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        pairs = zip(self._dims, other._dims, strict=True)
        return all(a is None or b is None or a == b for a, b in pairs)

    def most_specific_compatible_shape(self, other) -> TensorShape:
        """The shape both fit: dimensions that differ become ``None``."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape(
            [a if a == b else None for a, b in zip(self._dims, other._dims, strict=True)]
        )

    def merge_with(self, other) -> TensorShape:
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible.")
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        pairs = zip(self._dims, other._dims, strict=True)
        return TensorShape([a if a is not None else b for a, b in pairs])

    def concatenate(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return None if isinstance(key, int) else TensorShape(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __add__(self, other) -> TensorShape:
        return self.concatenate(other)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def as_shape(value) -> TensorShape:
    """Turn a TensorShape, a list/tuple of dims, or ``None`` into a TensorShape."""
    if isinstance(value, TensorShape):
        return value
    if isinstance(value, int):
        return TensorShape([value])
    return TensorShape(value)
