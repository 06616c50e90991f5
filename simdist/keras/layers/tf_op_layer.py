"""Keras 2's op layers: ``TFOpLambda`` (``tf.nn.relu(x)`` on a KerasTensor) and ``SlicingOpLambda``.

Calling a public TF op on KerasTensors of the Functional API (``tf.concat([a, b], -1)``,
``x * 2.0``, ``tf.split(x, 2, axis=1)``) records a ``TFOpLambda`` layer that calls the op when
the model runs; ``x[:, 0]`` records a ``SlicingOpLambda`` (``tf.__operators__.getitem``). As
in Keras 2:

* the layer is named ``tf.`` + the op's TF API name (``tf.nn.relu``, ``tf.math.multiply``,
  ``tf.__operators__.add``), counted like other layer names (``tf.nn.relu_1``), skipping a
  name that a layer was given explicitly;
* it holds no weights, does not autocast its inputs, and drops a ``name=`` argument;
* the arguments are kept as given: tensors at any place (``y=`` of ``x * y``, the list of
  ``tf.concat``), constants beside them; a slice is recorded as ``{"start", "stop",
  "step"}`` and turned back into a slice when the layer runs;
* ``get_config()`` adds ``"function"``, the op's TF API name (``"nn.relu"``), which
  ``from_config`` turns back into the op (``ValueError`` for a name simdist does not have).

The public op functions of ``simdist``'s faces build these layers (``simdist.symbolic_dispatch``);
the names come from ``simdist.core.api_symbols``.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import api_symbols
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.keras_tensor import is_symbolic, symbolic_call

__all__ = [
    "TFOpLambda",
    "SlicingOpLambda",
    "OPERATORS",
    "apply_operator",
    "op_layer_for",
    "slice_to_dict",
    "dict_to_slice",
]

_GETITEM = "__operators__.getitem"


class TFOpLambda(Layer):
    """A public TF op (``tf.nn.relu``) as a layer of a Functional model.

    Raises:
        ValueError: ``get_config`` of an op with no public TF name.
    """

    def __init__(self, function, **kwargs) -> None:
        if isinstance(function, str):
            function = _resolve(function)
        symbol = api_symbols.name_of(function)
        if "name" not in kwargs or kwargs["name"] is None:
            from simdist.keras import backend

            kwargs["name"] = backend.unique_object_name(
                f"tf.{symbol}" if symbol else function.__name__, avoid_observed_names=True
            )
        kwargs["autocast"] = False
        super().__init__(**kwargs)
        object.__setattr__(self, "function", function)
        object.__setattr__(self, "symbol", symbol)
        object.__setattr__(self, "built", True)  # no weights to build

    def call(self, *args, **kwargs):
        kwargs.pop("name", None)  # a reused layer must not pass one name twice
        return self.function(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        if is_symbolic([list(args), list(kwargs.values())]):
            return symbolic_call(self, self._probe_op, args, kwargs)
        kwargs.pop("training", None)  # what a Functional model passes to every layer
        return self.call(*args, **kwargs)

    def _probe_op(self, *args, **kwargs):
        with np.errstate(all="ignore"):  # the probes' zeros may divide by zero
            try:
                return self._probe_call(*args, **kwargs)
            except (errors.InvalidArgumentError, ValueError, IndexError) as exc:
                if hasattr(exc, "add_note"):  # Python 3.11+
                    exc.add_note(
                        f"(while recording op layer '{self.name}': simdist finds its output "
                        "shape by running the op on zeros, each unknown dimension as 1 and then "
                        "as 2; an op that needs more, such as an index into the batch axis, "
                        "fails there)"
                    )
                raise

    def get_config(self) -> dict:
        if not self.symbol:
            raise ValueError(
                f"Cannot save op layer '{self.name}': it calls {self.function}, which has no "
                "name in the public TensorFlow API, and an op layer is saved by that name. "
                "Use a public op, or a layer class of your own with get_config."
            )
        return {**super().get_config(), "function": self.symbol}

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        config["function"] = _resolve(config["function"])
        return cls(**config)


class SlicingOpLambda(TFOpLambda):
    """``x[key]`` on a KerasTensor as a layer (``tf.__operators__.getitem``)."""

    def __call__(self, *args, **kwargs):
        if is_symbolic([list(args), list(kwargs.values())]):
            args, kwargs = _map_slices(slice_to_dict, args, kwargs)
        return super().__call__(*args, **kwargs)

    def call(self, *args, **kwargs):
        args, kwargs = _map_slices(dict_to_slice, args, kwargs)
        if len(args) > 1 and isinstance(args[1], list):  # a key read back from JSON
            args = (args[0], tuple(args[1]), *args[2:])
        if isinstance(kwargs.get("slice_spec"), list):
            kwargs["slice_spec"] = tuple(kwargs["slice_spec"])
        return super().call(*args, **kwargs)


def slice_to_dict(value):
    """A slice as Keras 2 records it in a node: ``{"start", "stop", "step"}``."""
    if isinstance(value, slice):
        return {"start": value.start, "stop": value.stop, "step": value.step}
    return value


def dict_to_slice(value):
    """Back from :func:`slice_to_dict`."""
    if isinstance(value, dict) and set(value) == {"start", "stop", "step"}:
        return slice(value["start"], value["stop"], value["step"])
    return value


def _map_slices(convert, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``convert`` each argument and each item of a list/tuple argument (one level, as Keras)."""

    def one(value):
        value = convert(value)
        if isinstance(value, (list, tuple)):
            value = type(value)(convert(v) for v in value)
        return value

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _resolve(name: str):
    function = api_symbols.resolve(name)
    if function is None:
        raise ValueError(f"TF symbol `{name}` could not be found.")
    return function


def op_layer_for(function) -> TFOpLambda:
    """A new op layer for the public op ``function`` (a SlicingOpLambda for ``getitem``)."""
    if api_symbols.name_of(function) == _GETITEM:
        return SlicingOpLambda(function)
    return TFOpLambda(function)


# KerasTensor method -> the TF op Keras 2 records for it (reflected methods swap the operands)
OPERATORS = {
    "__add__": "__operators__.add",
    "__sub__": "math.subtract",
    "__mul__": "math.multiply",
    "__truediv__": "math.truediv",
    "__floordiv__": "compat.v1.floor_div",
    "__mod__": "math.floormod",
    "__pow__": "math.pow",
    "__matmul__": "linalg.matmul",
    "__lt__": "math.less",
    "__le__": "math.less_equal",
    "__gt__": "math.greater",
    "__ge__": "math.greater_equal",
    "__and__": "math.logical_and",
    "__or__": "math.logical_or",
    "__xor__": "math.logical_xor",
    "__neg__": "math.negative",
    "__abs__": "math.abs",
    "__invert__": "math.logical_not",
    "__getitem__": _GETITEM,
}
_REFLECTED = {"__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
              "__rpow__", "__rmatmul__", "__rand__", "__ror__", "__rxor__"}  # fmt: skip


def apply_operator(method: str, tensor, *operands):
    """``tensor.<method>(*operands)`` on a KerasTensor: the op layer Keras 2 records.

    As TF's operators do, every op but ``getitem`` is called with ``name=None`` too (which
    the layer's config shows).
    """
    if method in _REFLECTED:
        symbol = OPERATORS["__" + method[3:]]
        args = (operands[0], tensor)
    else:
        symbol = OPERATORS[method]
        args = (tensor, *operands)
    layer = op_layer_for(_resolve(symbol))
    return layer(*args) if symbol == _GETITEM else layer(*args, name=None)
