"""Layer wrappers: ``Bidirectional`` (a recurrent layer both ways) and ``TimeDistributed``.

``Bidirectional(layer)`` makes, as Keras 2, two fresh layers from ``layer``'s config: the
forward one (named ``forward_<name>``) and the backward one (``backward_<name>``, with
``go_backwards`` flipped), or takes ``backward_layer`` as given. The wrapped ``layer`` itself
is not used (nor tracked). Both run on the same inputs and mask; with
``return_sequences=True`` the backward output is reversed in time so step ``t`` of both
belongs to input step ``t``; ``merge_mode`` ``'concat'`` (default), ``'sum'``, ``'mul'``,
``'ave'`` or ``None`` (a list of both) joins them. With ``return_state=True`` the result is
``[output, *forward_states, *backward_states]``; an ``initial_state`` list is split in half
the same way. Weights: the forward layer's, then the backward layer's
(``bidirectional/forward_lstm/lstm_cell/kernel:0``, ...).

``TimeDistributed(layer)`` applies ``layer`` to every step of ``[batch, time, ...]`` inputs,
by folding time into the batch (``[batch * time, ...]``) and unfolding the result. The inner
layer's weights keep its own name scope (``time_distributed/dense/kernel:0``, where Keras 2
builds it in the wrapper's: ``time_distributed/kernel:0``); their order and shapes are
Keras's, so ``get_weights``/``set_weights`` carry over.
"""

from __future__ import annotations

import copy

from simdist.core.ops import array_ops, join_ops, math_ops, slicing_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import static_shape

__all__ = ["Bidirectional", "TimeDistributed", "serialize_layer", "deserialize_layer"]

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def serialize_layer(layer: Layer) -> dict:
    """``{'class_name', 'config'}`` of ``layer``, as Keras 2 nests a wrapped layer."""
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def deserialize_layer(entry: dict, custom_objects=None) -> Layer:
    """A built-in (or ``custom_objects``) layer from :func:`serialize_layer`'s dict.

    Raises:
        ValueError: an unknown class name.
    """
    from simdist.keras import layers

    name = entry["class_name"]
    cls = (custom_objects or {}).get(name) or getattr(layers, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Layer)):
        raise ValueError(f"Unknown layer: '{name}'; pass it in custom_objects.")
    return cls.from_config(dict(entry["config"]))


class _Wrapper(Layer):
    """Keras's ``Wrapper``: holds ``layer`` and nests its config under ``'layer'``."""

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": serialize_layer(self.layer)}


class Bidirectional(_Wrapper):
    """Run a recurrent layer forwards and backwards (see the module docstring).

    Raises:
        ValueError: an unknown ``merge_mode``, a ``layer`` that is not a Layer, or a
            ``backward_layer`` whose ``return_sequences``/``return_state`` differ.
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `Bidirectional` layer with a `tf.keras.layers.Layer` "
                f"instance. Received: {layer}"
            )
        if merge_mode not in _MERGE_MODES:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        super().__init__(**kwargs)
        object.__setattr__(self, "layer", layer)  # as Keras 2: the template, not tracked
        forward = _recreate(layer, flip=False)
        if backward_layer is None:
            backward = _recreate(layer, flip=True)
        else:
            backward = backward_layer
            for attribute in ("return_sequences", "return_state"):
                if getattr(backward, attribute) != getattr(layer, attribute):
                    raise ValueError(
                        f"Forward layer and backward layer should have the same {attribute}; "
                        f"received {getattr(layer, attribute)} and "
                        f"{getattr(backward, attribute)}."
                    )
            object.__setattr__(self, "_backward_layer_config", serialize_layer(backward))
        object.__setattr__(forward, "_name", "forward_" + forward.name)
        object.__setattr__(backward, "_name", "backward_" + backward.name)
        for recurrent in (forward, backward):  # as Keras 2: zeros at masked steps
            if getattr(recurrent, "zero_output_for_mask", None) is not None:
                recurrent.zero_output_for_mask = recurrent.return_sequences
        self.forward_layer = forward
        self.backward_layer = backward
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        if weights:
            object.__setattr__(self, "_initial_weights", list(weights))

    def build(self, input_shape) -> None:
        self.forward_layer._maybe_build(input_shape)
        self.backward_layer._maybe_build(input_shape)
        self.built = True

    def call(self, inputs, training=None, mask=None, initial_state=None):
        forward_kwargs, backward_kwargs = {"mask": mask}, {"mask": mask}
        if training is not None:
            forward_kwargs["training"] = backward_kwargs["training"] = training
        if initial_state is not None:
            states = list(initial_state)
            half = len(states) // 2
            forward_kwargs["initial_state"] = states[:half]
            backward_kwargs["initial_state"] = states[half:]
        y = self.forward_layer(inputs, **forward_kwargs)
        y_rev = self.backward_layer(inputs, **backward_kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = slicing_ops.getitem(y_rev, (slice(None), slice(None, None, -1)))
        if self.merge_mode == "concat":
            output = join_ops.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = math_ops.add(y, y_rev)
        elif self.merge_mode == "ave":
            output = math_ops.multiply(math_ops.add(y, y_rev), 0.5)
        elif self.merge_mode == "mul":
            output = math_ops.multiply(y, y_rev)
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if self.merge_mode is None else [output]) + states
        return output

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        else:
            output_mask = [output_mask]
        if self.return_state:
            count = len(self.forward_layer._state_sizes()) * 2
            return output_mask + [None] * count
        return output_mask if self.merge_mode is None else output_mask[0]

    def compute_output_shape(self, input_shape):
        shape = self.forward_layer.compute_output_shape(input_shape)
        out, states = (shape[0], list(shape[1:])) if self.return_state else (shape, [])
        if self.merge_mode == "concat":
            dims = as_shape(out).as_list()
            dims[-1] = None if dims[-1] is None else dims[-1] * 2
            out = TensorShape(dims)
        outputs = [out, copy.copy(out)] if self.merge_mode is None else [out]
        if self.return_state:
            return outputs + states + copy.copy(states)
        return outputs if self.merge_mode is None else outputs[0]

    def get_config(self) -> dict:
        config = {**super().get_config(), "merge_mode": self.merge_mode}
        backward = getattr(self, "_backward_layer_config", None)
        if backward is not None:
            config["backward_layer"] = backward
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            backward = deserialize_layer(backward, custom_objects)
        return cls(layer, backward_layer=backward, **config)


def _recreate(layer: Layer, flip: bool) -> Layer:
    """A fresh copy of ``layer`` from its config (``go_backwards`` flipped with ``flip``)."""
    config = layer.get_config()
    if flip:
        config["go_backwards"] = not config["go_backwards"]
    return type(layer).from_config(config)


class TimeDistributed(_Wrapper):
    """Apply ``layer`` to each time step of ``[batch, time, ...]`` inputs.

    Raises:
        ValueError: a ``layer`` that is not a Layer; at build, inputs of rank below 3.
    """

    def __init__(self, layer, **kwargs) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `TimeDistributed` layer with a `tf.keras.layers.Layer` "
                f"instance. Received: {layer}"
            )
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = True

    def build(self, input_shape) -> None:
        dims = as_shape(input_shape).as_list()
        if len(dims) < 3:
            raise ValueError(
                "`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                f"dimensions, received: {dims}"
            )
        self.layer._maybe_build(TensorShape([None, *dims[2:]]))
        self.built = True

    def call(self, inputs, training=None, mask=None):
        batch, steps, *rest = static_shape(inputs)
        folded = array_ops.reshape(inputs, [batch * steps, *rest])
        kwargs = {}
        if training is not None and self.layer._expects_training_arg:
            kwargs["training"] = training
        if mask is not None and self.layer._expects_mask_arg:
            kwargs["mask"] = array_ops.reshape(mask, [batch * steps, *mask.shape[2:]])
        out = self.layer(folded, **kwargs)
        return array_ops.reshape(out, [batch, steps, *static_shape(out)[1:]])

    def compute_output_shape(self, input_shape):
        dims = as_shape(input_shape).as_list()
        inner = as_shape(self.layer.compute_output_shape(TensorShape([None, *dims[2:]])))
        return TensorShape([dims[0], dims[1], *inner.as_list()[1:]])

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)
