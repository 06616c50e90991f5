"""``tf.keras.constraints``: projections applied to a weight after each update.

A constraint maps a weight's new value to an allowed one (``eps = backend.epsilon()``;
norms along ``axis``, kept as size-1 dimensions):

* ``NonNeg``: negative entries become 0;
* ``MaxNorm(max_value, axis)``: ``w * clip(n, 0, max_value) / (eps + n)``;
* ``UnitNorm(axis)``: ``w / (eps + n)``;
* ``MinMaxNorm(min_value, max_value, rate, axis)``:
  ``w * (rate * clip(n, min_value, max_value) + (1 - rate) * n) / (eps + n)``.

A variable's ``constraint`` runs on every write to the variable in simdist (an optimizer's
update is one write per step, so this is where Keras applies it: after the update).
"""

from __future__ import annotations

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import comparison_ops, elementwise_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor
from simdist.keras import backend
from simdist.keras.serialization import find_class, object_config

__all__ = [
    "Constraint",
    "NonNeg",
    "MaxNorm",
    "UnitNorm",
    "MinMaxNorm",
    "max_norm",
    "non_neg",
    "unit_norm",
    "min_max_norm",
    "get",
    "serialize",
    "deserialize",
]


def _norms(w: Tensor, axis) -> Tensor:
    squared = reduction_ops.reduce_sum(elementwise_ops.square(w), axis=axis, keepdims=True)
    return elementwise_ops.sqrt(squared)


class Constraint:
    """Base class: ``__call__(w)`` returns the projected weight (the base: ``w``)."""

    def __call__(self, w) -> Tensor:
        return convert_to_tensor(w)

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class NonNeg(Constraint):
    """Weights are non-negative."""

    def __call__(self, w) -> Tensor:
        w = convert_to_tensor(w)
        keep = math_ops.cast(comparison_ops.greater_equal(w, 0.0), w.dtype)
        return math_ops.multiply(w, keep)


class MaxNorm(Constraint):
    """The norm along ``axis`` is at most ``max_value``."""

    def __init__(self, max_value=2, axis=0) -> None:
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w) -> Tensor:
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = math_ops.clip_by_value(norms, 0.0, float(self.max_value))
        scale = math_ops.divide(desired, math_ops.add(norms, backend.epsilon()))
        return math_ops.multiply(w, scale)

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class UnitNorm(Constraint):
    """The norm along ``axis`` is 1."""

    def __init__(self, axis=0) -> None:
        self.axis = axis

    def __call__(self, w) -> Tensor:
        w = convert_to_tensor(w)
        return math_ops.divide(w, math_ops.add(_norms(w, self.axis), backend.epsilon()))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """The norm along ``axis`` moves (at ``rate``) into ``[min_value, max_value]``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0) -> None:
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w) -> Tensor:
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        clipped = math_ops.clip_by_value(norms, float(self.min_value), float(self.max_value))
        desired = math_ops.add(
            math_ops.multiply(self.rate, clipped), math_ops.multiply(1.0 - self.rate, norms)
        )
        scale = math_ops.divide(desired, math_ops.add(norms, backend.epsilon()))
        return math_ops.multiply(w, scale)

    def get_config(self) -> dict:
        return {
            "min_value": self.min_value,
            "max_value": self.max_value,
            "rate": self.rate,
            "axis": self.axis,
        }


max_norm = maxnorm = MaxNorm
non_neg = nonneg = NonNeg
unit_norm = unitnorm = UnitNorm
min_max_norm = MinMaxNorm

_CLASSES = {cls.__name__: cls for cls in (Constraint, NonNeg, MaxNorm, UnitNorm, MinMaxNorm)}
_NAMES = {
    "max_norm": MaxNorm,
    "maxnorm": MaxNorm,
    "non_neg": NonNeg,
    "nonneg": NonNeg,
    "unit_norm": UnitNorm,
    "unitnorm": UnitNorm,
    "min_max_norm": MinMaxNorm,
}


def serialize(constraint) -> dict | str:
    """Keras 2's ``{'module', 'class_name', 'config', 'registered_name'}``; a plain function
    as its name (load it back with ``custom_objects``)."""
    if not isinstance(constraint, Constraint):
        name = getattr(constraint, "__name__", None)
        if not name or name == "<lambda>":
            raise ValueError(
                f"Cannot serialize {constraint!r}: a lambda has no name to save; use a named "
                "function or a Constraint subclass with get_config()."
            )
        return name
    return object_config(constraint, "keras.constraints")


def deserialize(config, custom_objects=None) -> Constraint:
    """A constraint from a name (``'non_neg'``) or :func:`serialize`'s dict.

    Raises:
        ValueError: an unknown name.
    """
    cls = find_class(config, custom_objects, _CLASSES, _NAMES, "constraint")
    return cls() if isinstance(config, str) else cls.from_config(config.get("config") or {})


def get(identifier, custom_objects=None):
    """A constraint from ``None``, a name, a config dict, a constraint or a callable.

    Raises:
        ValueError: the identifier names no constraint, or is of another kind.
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier, custom_objects)
    if callable(identifier):
        return identifier
    raise ValueError(
        f"Could not interpret constraint function identifier: {identifier!r}; pass a "
        "constraint, its name or a callable."
    )
