"""Layers that merge a list of inputs: ``Add``, ``Subtract``, ``Multiply``, ``Average``,
``Maximum``, ``Minimum``, ``Concatenate``, and their function forms (``add([a, b])``).

Elementwise merges combine the inputs left to right (``((a + b) + c)``), broadcasting as the
ops do; every input must have the same shape apart from axes of size 1.
"""

from __future__ import annotations

from simdist.core.ops import array_ops, creation_ops, join_ops, math_ops, reduction_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer

__all__ = [
    "Add",
    "Subtract",
    "Multiply",
    "Average",
    "Maximum",
    "Minimum",
    "Concatenate",
    "add",
    "subtract",
    "multiply",
    "average",
    "maximum",
    "minimum",
    "concatenate",
]


def _check_list(layer, inputs, exactly: int | None = None) -> list:
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ValueError(
            f"A merge layer ({type(layer).__name__}) should be called on a list of at least 2 "
            f"inputs. Got {len(inputs) if isinstance(inputs, (list, tuple)) else 1} input."
        )
    if exactly is not None and len(inputs) != exactly:
        raise ValueError(
            f"A `{type(layer).__name__}` layer should be called on exactly {exactly} inputs. "
            f"Received: inputs={len(inputs)} inputs"
        )
    return list(inputs)


def _broadcast_shapes(layer, shapes: list) -> TensorShape:
    dims = [as_shape(s).as_list() for s in shapes]
    rank = max(len(d) for d in dims)
    out = []
    for axis in range(rank):
        sizes = {d[axis - rank + len(d)] for d in dims if axis - rank + len(d) >= 0}
        known = {s for s in sizes if s not in (None, 1)}
        if len(known) > 1:
            raise ValueError(
                f"Inputs of a {type(layer).__name__} layer have incompatible shapes: "
                f"{[tuple(d) for d in dims]}"
            )
        out.append(known.pop() if known else (None if None in sizes else 1))
    return TensorShape(out)


class _Merge(Layer):
    _EXACTLY = None

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """The AND of the inputs' masks (None when no input has one)."""
        if mask is None or all(m is None for m in mask):
            return None
        out = None
        for m in mask:
            if m is not None:
                out = m if out is None else math_ops.logical_and(out, m)
        return out

    def _merge(self, a: Tensor, b: Tensor) -> Tensor:
        raise NotImplementedError

    def call(self, inputs) -> Tensor:
        items = _check_list(self, inputs, self._EXACTLY)
        _broadcast_shapes(self, [tuple(x.shape) for x in items])
        out = items[0]
        for item in items[1:]:
            out = self._merge(out, item)
        return out

    def compute_output_shape(self, input_shape) -> TensorShape:
        return _broadcast_shapes(self, list(input_shape))


class Add(_Merge):
    """The elementwise sum of the inputs."""

    def _merge(self, a, b):
        return math_ops.add(a, b)


class Subtract(_Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    _EXACTLY = 2

    def _merge(self, a, b):
        return math_ops.subtract(a, b)


class Multiply(_Merge):
    """The elementwise product of the inputs."""

    def _merge(self, a, b):
        return math_ops.multiply(a, b)


class Maximum(_Merge):
    """The elementwise maximum of the inputs."""

    def _merge(self, a, b):
        return math_ops.maximum(a, b)


class Minimum(_Merge):
    """The elementwise minimum of the inputs."""

    def _merge(self, a, b):
        return math_ops.minimum(a, b)


class Average(_Merge):
    """The elementwise mean: the sum of the inputs (left to right) divided by their count."""

    def call(self, inputs) -> Tensor:
        total = Add.call(self, inputs)
        return math_ops.divide(total, float(len(inputs)))

    def _merge(self, a, b):
        return math_ops.add(a, b)


class Concatenate(Layer):
    """Join the inputs along ``axis`` (default the last); the other axes must agree.

    Raises:
        ValueError: fewer than two inputs, or shapes that differ off ``axis``.
    """

    def __init__(self, axis=-1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = int(axis)
        self.supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """Each input's mask (all true where it has none) joined along ``axis``; on the
        features axis, their AND."""
        if mask is None or all(m is None for m in mask):
            return None
        parts = []
        for x, m in zip(inputs, mask, strict=True):
            if m is None:
                m = creation_ops.ones_like(x, dtype="bool")
            if len(m.shape) < len(x.shape):
                m = array_ops.expand_dims(m, -1)
            parts.append(m)
        joined = join_ops.concat(parts, axis=self.axis)
        return reduction_ops.reduce_all(joined, axis=-1)

    def _check(self, shapes: list) -> list:
        dims = [as_shape(s).as_list() for s in shapes]
        rank = len(dims[0])
        if any(len(d) != rank for d in dims) or not -rank <= self.axis < rank:
            raise ValueError(
                "A `Concatenate` layer requires inputs with matching shapes except for the "
                f"concatenation axis. Received: input_shape={[tuple(d) for d in dims]}"
            )
        axis = self.axis % rank
        for i in range(rank):
            sizes = {d[i] for d in dims if d[i] is not None}
            if i != axis and len(sizes) > 1:
                raise ValueError(
                    "A `Concatenate` layer requires inputs with matching shapes except for the "
                    f"concatenation axis. Received: input_shape={[tuple(d) for d in dims]}"
                )
        return dims

    def call(self, inputs) -> Tensor:
        items = _check_list(self, inputs)
        self._check([tuple(x.shape) for x in items])
        return join_ops.concat(items, axis=self.axis)

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = self._check(list(input_shape))
        axis = self.axis % len(dims[0])
        out = list(dims[0])
        sizes = [d[axis] for d in dims]
        out[axis] = None if None in sizes else sum(sizes)
        for i in range(len(out)):
            if out[i] is None and i != axis:
                out[i] = next((d[i] for d in dims if d[i] is not None), None)
        return TensorShape(out)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)

    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"``{cls.__name__}(**kwargs)(inputs)``."
    return merge


add = _functional(Add)
subtract = _functional(Subtract)
multiply = _functional(Multiply)
average = _functional(Average)
maximum = _functional(Maximum)
minimum = _functional(Minimum)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)
