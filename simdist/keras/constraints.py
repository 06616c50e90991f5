"""``tf.keras.constraints``: projections applied to a weight after each optimizer update.

``MaxNorm``, ``MinMaxNorm`` and ``UnitNorm`` rescale along ``axis`` (Keras 2: axis 0, each
column of a Dense kernel); ``NonNeg`` zeroes negative entries. ``get`` resolves what a layer's
``kernel_constraint=`` accepts: None, a name, a config dict, a constraint or any callable.
"""

from __future__ import annotations

from simdist.core.ops import elementwise_ops, math_ops, reduction_ops

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "get", "serialize"]

_EPSILON = 1e-7  # Keras's backend.epsilon()


class Constraint:
    """The base class: ``constraint(weight)`` returns the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _norms(w, axis):
    return elementwise_ops.sqrt(
        reduction_ops.reduce_sum(elementwise_ops.square(w), axis=axis, keepdims=True)
    )


class MaxNorm(Constraint):
    """Scale so that the norm along ``axis`` is at most ``max_value``."""

    def __init__(self, max_value=2, axis=0) -> None:
        self.max_value = float(max_value)
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = math_ops.clip_by_value(norms, 0.0, self.max_value)
        return math_ops.multiply(w, math_ops.divide(desired, math_ops.add(norms, _EPSILON)))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Move the norm along ``axis`` into ``[min_value, max_value]`` by ``rate``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0) -> None:
        self.min_value, self.max_value = float(min_value), float(max_value)
        self.rate, self.axis = float(rate), axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        clipped = math_ops.clip_by_value(norms, self.min_value, self.max_value)
        desired = math_ops.add(
            math_ops.multiply(clipped, self.rate), math_ops.multiply(norms, 1.0 - self.rate)
        )
        return math_ops.multiply(w, math_ops.divide(desired, math_ops.add(norms, _EPSILON)))

    def get_config(self) -> dict:
        return {
            "min_value": self.min_value,
            "max_value": self.max_value,
            "rate": self.rate,
            "axis": self.axis,
        }


class UnitNorm(Constraint):
    """Scale to norm 1 along ``axis``."""

    def __init__(self, axis=0) -> None:
        self.axis = axis

    def __call__(self, w):
        return math_ops.divide(w, math_ops.add(_norms(w, self.axis), _EPSILON))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class NonNeg(Constraint):
    """Zero the negative entries."""

    def __call__(self, w):
        return math_ops.maximum(w, 0.0)


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
_CLASSES = {
    "MaxNorm": MaxNorm,
    "MinMaxNorm": MinMaxNorm,
    "NonNeg": NonNeg,
    "UnitNorm": UnitNorm,
    "max_norm": MaxNorm,
    "min_max_norm": MinMaxNorm,
    "non_neg": NonNeg,
    "unit_norm": UnitNorm,
}


def serialize(constraint) -> dict:
    """``{'class_name', 'config'}`` of a constraint.

    Raises:
        ValueError: a plain callable (it has no config).
    """
    if not isinstance(constraint, Constraint):
        raise ValueError(f"Cannot serialize {constraint!r}: it is not a Keras Constraint.")
    return {"class_name": type(constraint).__name__, "config": constraint.get_config()}


def get(identifier):
    """A constraint from None, a name, a config dict, a constraint or a callable.

    Raises:
        ValueError: an identifier that names no constraint.
    """
    if identifier is None or isinstance(identifier, Constraint):
        return identifier
    if isinstance(identifier, dict):
        name = identifier.get("class_name")
        if name not in _CLASSES:
            raise ValueError(f"Unknown constraint: {name!r}; known: {sorted(_CLASSES)}.")
        return _CLASSES[name].from_config(identifier.get("config", {}))
    if isinstance(identifier, str):
        if identifier not in _CLASSES:
            raise ValueError(
                f"Could not interpret constraint identifier: {identifier!r}; use one of "
                f"{sorted(_CLASSES)}."
            )
        return _CLASSES[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")
