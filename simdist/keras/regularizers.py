"""``tf.keras.regularizers``: weight and activity penalties added to ``model.losses``.

A regularizer is a callable ``penalty(x) -> scalar``, differentiable in ``x``:

* ``L1(l1)``: ``l1 * sum(|x|)``; ``L2(l2)``: ``l2 * sum(x^2)``; ``L1L2(l1, l2)``: both;
* ``OrthogonalRegularizer(factor, mode)``: for a 2-D ``x`` whose rows (``'rows'``) or
  columns (``'columns'``) are L2-normalised, ``factor * mean over pairs of |dot products|``.

Factors are stored as float32 values, as Keras 2 does (``l2(0.1).l2 == 0.10000000149...``).
A layer's ``kernel_regularizer`` / ``bias_regularizer`` adds ``penalty(weight)`` to
``layer.losses`` (recomputed on every read, so under a ``GradientTape`` it has a gradient);
an ``activity_regularizer`` adds ``penalty(outputs) / batch_size`` of the latest call.
Under a strategy, Keras's ``fit`` divides the summed regularization losses by the number of
replicas (``tf.nn.scale_regularization_loss``) so that adding the replicas' losses counts
the penalty once; custom loops do that themselves.
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, elementwise_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor
from simdist.keras import constraints
from simdist.keras.serialization import find_class, object_config

__all__ = [
    "Regularizer",
    "L1",
    "L2",
    "L1L2",
    "OrthogonalRegularizer",
    "l1",
    "l2",
    "l1_l2",
    "orthogonal_regularizer",
    "get",
    "serialize",
    "deserialize",
    "record_activity",
    "penalties_config",
]


def _penalty(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(
            f"Value {value} is not a valid regularization penalty number, expected an int or a "
            f"float value (argument `{name}`)."
        )
    if math.isnan(value) or math.isinf(value):
        raise ValueError(
            f"Value {name}={value} is not a valid regularization penalty number, expected a "
            "finite int or float value."
        )
    return float(np.float32(value))


class Regularizer:
    """Base class: ``__call__(x)`` returns the penalty; ``get_config`` / ``from_config``."""

    def __call__(self, x) -> Tensor:
        return convert_to_tensor(0.0)

    def get_config(self) -> dict:
        raise NotImplementedError(f"{type(self).__name__} must implement get_config().")

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class L1(Regularizer):
    """``l1 * reduce_sum(abs(x))``."""

    def __init__(self, l1=0.01, **kwargs) -> None:
        l1 = kwargs.pop("l", l1)
        if kwargs:
            raise TypeError(f"Unexpected keyword argument(s) for L1: {sorted(kwargs)}.")
        self.l1 = _penalty(0.01 if l1 is None else l1, "l1")

    def __call__(self, x) -> Tensor:
        return math_ops.multiply(self.l1, reduction_ops.reduce_sum(elementwise_ops.abs(x)))

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * reduce_sum(square(x))``."""

    def __init__(self, l2=0.01, **kwargs) -> None:
        l2 = kwargs.pop("l", l2)
        if kwargs:
            raise TypeError(f"Unexpected keyword argument(s) for L2: {sorted(kwargs)}.")
        self.l2 = _penalty(0.01 if l2 is None else l2, "l2")

    def __call__(self, x) -> Tensor:
        return math_ops.multiply(self.l2, reduction_ops.reduce_sum(elementwise_ops.square(x)))

    def get_config(self) -> dict:
        return {"l2": self.l2}


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x^2)`` (terms that are 0 are left out)."""

    def __init__(self, l1=0.0, l2=0.0) -> None:
        self.l1 = _penalty(0.0 if l1 is None else l1, "l1")
        self.l2 = _penalty(0.0 if l2 is None else l2, "l2")

    def __call__(self, x) -> Tensor:
        x = convert_to_tensor(x)
        total = convert_to_tensor(np.zeros((), x.dtype.as_numpy_dtype))
        if self.l1:
            l1_term = reduction_ops.reduce_sum(elementwise_ops.abs(x))
            total = math_ops.add(total, math_ops.multiply(self.l1, l1_term))
        if self.l2:
            l2_term = reduction_ops.reduce_sum(elementwise_ops.square(x))
            total = math_ops.add(total, math_ops.multiply(self.l2, l2_term))
        return total

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Penalises non-orthogonal rows (or columns) of a 2-D weight.

    Raises:
        ValueError: ``mode`` other than ``'rows'``/``'columns'``; at call, an input that is
            not 2-D.
    """

    def __init__(self, factor=0.01, mode="rows") -> None:
        if mode not in ("rows", "columns"):
            raise ValueError(
                f"Invalid value for argument `mode`. Expected one of {{'rows', 'columns'}}. "
                f"Received: mode={mode}"
            )
        self.factor = _penalty(factor, "factor")
        self.mode = mode

    def __call__(self, x) -> Tensor:
        x = convert_to_tensor(x)
        if x.shape.rank != 2:
            raise ValueError(
                "Inputs to OrthogonalRegularizer must have rank 2. Received: "
                f"inputs.shape={x.shape}"
            )
        axis = 1 if self.mode == "rows" else 0
        squared = reduction_ops.reduce_sum(elementwise_ops.square(x), axis=axis, keepdims=True)
        x = math_ops.multiply(x, elementwise_ops.rsqrt(math_ops.maximum(squared, 1e-12)))
        if self.mode == "rows":
            product = math_ops.matmul(x, array_ops.transpose(x))
        else:
            product = math_ops.matmul(array_ops.transpose(x), x)
        size = int(product.shape[0])
        off_diagonal = math_ops.multiply(product, 1.0 - np.eye(size, dtype=np.float32))
        pairs = size * (size - 1) / 2.0
        total = reduction_ops.reduce_sum(elementwise_ops.abs(off_diagonal))
        return math_ops.multiply(self.factor * 0.5 / pairs if pairs else 0.0, total)

    def get_config(self) -> dict:
        return {"factor": self.factor, "mode": self.mode}


def l1_l2(l1=0.01, l2=0.01) -> L1L2:
    """An :class:`L1L2` with both penalties (0.01 each by default)."""
    return L1L2(l1=l1, l2=l2)


l1 = L1
l2 = L2
orthogonal_regularizer = OrthogonalRegularizer

_CLASSES = {cls.__name__: cls for cls in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
_NAMES = {"l1": L1, "l2": L2, "l1_l2": l1_l2, "orthogonal_regularizer": OrthogonalRegularizer}


def serialize(regularizer) -> dict | str:
    """Keras 2's ``{'module', 'class_name', 'config', 'registered_name'}``; a plain function
    as its name (load it back with ``custom_objects``)."""
    if not isinstance(regularizer, Regularizer):
        return _function_name(regularizer)
    return object_config(regularizer, "keras.regularizers")


def deserialize(config, custom_objects=None) -> Regularizer:
    """A regularizer from a name (``'l2'``: default factors) or :func:`serialize`'s dict.

    Raises:
        ValueError: an unknown name.
    """
    cls = find_class(config, custom_objects, _CLASSES, _NAMES, "regularizer")
    if isinstance(config, str):
        return cls()
    return cls.from_config(config.get("config") or {})


def get(identifier, custom_objects=None):
    """A regularizer from ``None``, a name, a config dict, a regularizer or a callable.

    Raises:
        ValueError: the identifier names no regularizer, or is of another kind.
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier, custom_objects)
    if callable(identifier):
        return identifier
    raise ValueError(
        f"Could not interpret regularizer identifier: {identifier!r}; pass 'l1', 'l2', "
        "'l1_l2', a regularizer or a callable."
    )


def record_activity(layer, outputs) -> Tensor:
    """Keep ``activity_regularizer(outputs) / batch_size`` as ``layer``'s activity loss.

    The loss of the layer's latest call is the one in ``layer.losses`` (as Keras 2: each
    call replaces it); returns ``outputs`` unchanged.
    """
    regularizer = layer.activity_regularizer
    if regularizer is None:
        return outputs
    outputs_tensor = convert_to_tensor(outputs)
    penalty = convert_to_tensor(regularizer(outputs_tensor))
    batch = int(outputs_tensor.shape[0]) if outputs_tensor.shape.rank else 1
    loss = math_ops.divide(penalty, float(batch)) if batch else math_ops.multiply(penalty, 0.0)
    if "_activity_loss" not in layer.__dict__:
        layer._losses.append(lambda: layer.__dict__["_activity_loss"])
    object.__setattr__(layer, "_activity_loss", loss)
    return outputs


def _function_name(fn) -> str:
    name = getattr(fn, "__name__", None)
    if not name or name == "<lambda>":
        raise ValueError(
            f"Cannot serialize {fn!r}: a lambda has no name to save; use a named function or "
            "a Regularizer / Constraint subclass with get_config()."
        )
    return name


def penalties_config(layer) -> dict:
    """A layer's regularizers and constraints, serialized as Keras 2's ``get_config``."""

    def regularizer(obj):
        return None if obj is None else serialize(obj)

    def constraint(obj):
        return None if obj is None else constraints.serialize(obj)

    return {
        "kernel_regularizer": regularizer(layer.kernel_regularizer),
        "bias_regularizer": regularizer(layer.bias_regularizer),
        "activity_regularizer": regularizer(layer.activity_regularizer),
        "kernel_constraint": constraint(layer.kernel_constraint),
        "bias_constraint": constraint(layer.bias_constraint),
    }
