"""``tf.keras.regularizers``: weight penalties a layer adds to its ``losses``.

``L1(l1)`` is ``l1 * sum(|w|)``, ``L2(l2)`` is ``l2 * sum(w**2)``, ``L1L2`` their sum (Keras 2's
default factors: 0.01, and 0 for the unnamed half of ``L1L2``). ``get`` resolves what a
layer's ``kernel_regularizer=`` accepts: None, a name (``'l2'``), a config dict, a
regularizer or any callable.
"""

from __future__ import annotations

from simdist.core.ops import elementwise_ops, math_ops, reduction_ops

__all__ = [
    "Regularizer",
    "L1",
    "L2",
    "L1L2",
    "l1",
    "l2",
    "l1_l2",
    "get",
    "serialize",
    "deserialize",
]


class Regularizer:
    """The base class: ``regularizer(weight)`` is a scalar penalty."""

    def __call__(self, x):
        return 0.0

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _factor(value, name: str) -> float:
    number = float(value)
    if number < 0:
        raise ValueError(f"Value of `{name}` must be a non-negative number, got {value!r}.")
    return number


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1=0.0, l2=0.0) -> None:
        self.l1 = _factor(l1, "l1")
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        penalty = None
        if self.l1:
            penalty = math_ops.multiply(reduction_ops.reduce_sum(elementwise_ops.abs(x)), self.l1)
        if self.l2:
            term = math_ops.multiply(reduction_ops.reduce_sum(elementwise_ops.square(x)), self.l2)
            penalty = term if penalty is None else math_ops.add(penalty, term)
        if penalty is None:
            return math_ops.multiply(reduction_ops.reduce_sum(x), 0.0)
        return penalty

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|x|)``."""

    def __init__(self, l1=0.01, **kwargs) -> None:
        super().__init__(l1=kwargs.pop("l", l1))

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    """``l2 * sum(x**2)``."""

    def __init__(self, l2=0.01, **kwargs) -> None:
        super().__init__(l2=kwargs.pop("l", l2))

    def get_config(self) -> dict:
        return {"l2": self.l2}


def l1_l2(l1=0.01, l2=0.01) -> L1L2:
    """``L1L2(l1, l2)`` with Keras's defaults for the function form (0.01 each)."""
    return L1L2(l1=l1, l2=l2)


l1 = L1
l2 = L2

_CLASSES = {"L1": L1, "L2": L2, "L1L2": L1L2, "l1": L1, "l2": L2, "l1_l2": l1_l2}


def serialize(regularizer) -> dict:
    """``{'class_name', 'config'}`` of a regularizer.

    Raises:
        ValueError: a plain callable (it has no config).
    """
    if not isinstance(regularizer, Regularizer):
        raise ValueError(f"Cannot serialize {regularizer!r}: it is not a Keras Regularizer.")
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}


def deserialize(config: dict):
    name = config.get("class_name")
    if name not in _CLASSES:
        raise ValueError(f"Unknown regularizer: {name!r}; known: {sorted(_CLASSES)}.")
    cls = _CLASSES[name]
    return cls(**config.get("config", {}))


def get(identifier):
    """A regularizer from None, a name, a config dict, a regularizer or a callable.

    Raises:
        ValueError: an identifier that names no regularizer.
    """
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier not in _CLASSES:
            raise ValueError(
                f"Could not interpret regularizer identifier: {identifier!r}; use one of "
                f"{sorted(_CLASSES)}."
            )
        return _CLASSES[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
