"""Recurrent layers: ``RNN(cell)`` and ``SimpleRNN``, ``LSTM``, ``GRU`` over
``[batch, time, features]`` inputs (``time_major=False``), as Keras 2.

The layer runs its cell over the time axis (backwards with ``go_backwards=True``), from
zero states or ``initial_state``. It returns the last output, or with
``return_sequences=True`` every step's output ``[batch, time, units]``; with
``return_state=True`` it returns ``[output, *final_states]`` (LSTM: ``[output, h, c]``).
Gradients flow through every step (backpropagation through time).

Masks (``Embedding(mask_zero=True)``, ``Masking``, or ``mask=`` ``[batch, time]``): at a masked
step the cell's result is dropped for that example, and its states and output stay what they
were (zeros before its first unmasked step), as Keras 2's ``backend.rnn`` does; the output
sequence holds the carried output there. With ``return_sequences=True`` the output carries
the input mask on. Not yet in simdist, and refused with NotImplementedError:
``stateful=True``, ``time_major=True``, cell dropout.
"""

from __future__ import annotations

import numpy as np

from simdist.core import nest
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, creation_ops, join_ops, math_ops, slicing_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.keras import backend
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, static_shape
from simdist.keras.layers.rnn_cells import GRUCell, LSTMCell, SimpleRNNCell
from simdist.keras.layers.wrappers import deserialize_layer, serialize_layer

__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU"]


class RNN(Layer):
    """Run ``cell`` over the time axis (see the module docstring).

    Raises:
        NotImplementedError: ``stateful``, ``time_major`` or ``unroll`` options simdist lacks.
        ValueError: at call, inputs that are not ``[batch, time, features]``, or an
            ``initial_state`` of the wrong count.
    """

    def __init__(
        self,
        cell,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        time_major=False,
        **kwargs,
    ) -> None:
        zero_output_for_mask = bool(kwargs.pop("zero_output_for_mask", False))
        super().__init__(**kwargs)
        self.supports_masking = True
        # Keras 2: at a masked step the output is zeros instead of the carried output
        # (Bidirectional sets it to return_sequences on both of its layers)
        self.zero_output_for_mask = zero_output_for_mask
        if stateful or time_major:
            raise NotImplementedError(
                f"{type(self).__name__}: stateful=True and time_major=True are not yet in simdist."
            )
        if isinstance(cell, (list, tuple)):
            from simdist.keras.layers.rnn_stacked import StackedRNNCells

            cell = StackedRNNCells(cell)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.unroll = bool(unroll)
        self.stateful = False
        self.time_major = False

    def _state_sizes(self) -> list[int]:
        size = self.cell.state_size
        return [int(s) for s in nest.flatten(size)]

    def _output_units(self) -> int:
        size = getattr(self.cell, "output_size", None)
        return int(size) if size is not None else self._state_sizes()[0]

    def build(self, input_shape) -> None:
        shape = as_shape(input_shape)
        if shape.rank != 3 or shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__} expects inputs of shape (batch, time, features) with "
                f"known features; received input_shape={shape}."
            )
        self.cell._maybe_build(TensorShape([shape[0], shape[-1]]))
        self.built = True

    def call(self, inputs, initial_state=None, training=None, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        check_input(self, inputs, ndim=3)
        batch, steps, _ = static_shape(inputs)
        sizes = self._state_sizes()
        if initial_state is None:
            dtype = inputs.dtype.as_numpy_dtype
            states = [convert_to_tensor(np.zeros((batch, s), dtype)) for s in sizes]
        else:
            states = (
                list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            )
            if len(states) != len(sizes):
                raise ValueError(
                    f"An `initial_state` was passed that is not compatible with `cell.state_size"
                    f"`. Received `state_spec`={len(states)} states; `cell.state_size`={sizes}"
                )
            states = [convert_to_tensor(s) for s in states]
        keep = _step_masks(mask, batch, steps)
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outputs = []
        output = None
        for t in order:
            x_t = slicing_ops.getitem(inputs, (slice(None), t))
            new_output, new_states = self.cell.call(x_t, states, training=training)
            if keep is None:
                output, states = new_output, new_states
            else:
                if output is None or self.zero_output_for_mask:
                    output = creation_ops.zeros_like(new_output)
                output = array_ops.where(keep[t], new_output, output)
                states = [
                    array_ops.where(keep[t], new, old)
                    for new, old in zip(new_states, states, strict=True)
                ]
            if self.return_sequences:
                outputs.append(output)
        if output is None:
            raise ValueError(f"{type(self).__name__} received an input with 0 time steps.")
        result = join_ops.stack(outputs, axis=1) if self.return_sequences else output
        if self.return_state:
            regroup = getattr(self.cell, "nest_states", None)  # StackedRNNCells: per cell
            return [result, *(states if regroup is None else regroup(states))]
        return result

    def compute_mask(self, inputs, mask=None):
        """The input mask with ``return_sequences=True``, else None (and None per state)."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self._state_sizes())
        return output_mask

    def compute_output_shape(self, input_shape):
        batch, steps, _ = as_shape(input_shape).as_list()
        units = self._output_units()
        out = TensorShape([batch, steps, units] if self.return_sequences else [batch, units])
        if self.return_state:
            return [out, *(TensorShape([batch, s]) for s in self._state_sizes())]
        return out

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": False,
            "unroll": self.unroll,
            "time_major": False,
            "cell": serialize_layer(self.cell),
        }

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """Rebuild the layer, its cell (a nested ``{'class_name', 'config'}``) first."""
        config = dict(config)
        cell = config.pop("cell")
        if isinstance(cell, dict):
            cell = deserialize_layer(cell, custom_objects)
        return cls(cell, **config)


def _step_masks(mask, batch: int, steps: int) -> list | None:
    """Per step, a ``[batch, 1]`` bool tensor: whether each example's step counts.

    Raises:
        ValueError: a mask that is not ``[batch, time]``.
    """
    if mask is None:
        return None
    mask = convert_to_tensor(mask)
    if tuple(mask.shape) != (batch, steps):
        raise ValueError(
            f"A recurrent layer's mask must have shape (batch, time) = {(batch, steps)}; "
            f"received a mask of shape {tuple(mask.shape)}."
        )
    if not mask.dtype.is_bool:
        mask = math_ops.cast(mask, "bool")
    return [
        array_ops.expand_dims(slicing_ops.getitem(mask, (slice(None), t)), -1) for t in range(steps)
    ]


class _Recurrent(RNN):
    """A recurrent layer whose cell is made from the layer's own arguments."""

    _CELL = None
    _LAYER_ARGS = (
        "return_sequences",
        "return_state",
        "go_backwards",
        "stateful",
        "unroll",
        "time_major",
        "zero_output_for_mask",
    )

    def __init__(self, units, **kwargs) -> None:
        layer_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in self._LAYER_ARGS}
        for key in (
            "name",
            "trainable",
            "dtype",
            "input_shape",
            "batch_input_shape",
            "batch_size",
            "input_dim",
            "weights",
        ):
            if key in kwargs:
                layer_kwargs[key] = kwargs.pop(key)
        kwargs.pop("activity_regularizer", None)
        cell_name = f"{backend.to_snake_case(type(self).__name__)}_cell"  # as Keras 2
        cell = type(self)._CELL(units, dtype=layer_kwargs.get("dtype"), name=cell_name, **kwargs)
        super().__init__(cell, **layer_kwargs)

    @property
    def units(self) -> int:
        return self.cell.units

    def get_config(self) -> dict:
        cell_config = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell_config.pop(key, None)
        config = {**super().get_config(), **cell_config}
        config.pop("cell")  # Keras 2's recurrent layers spell their cell's arguments out
        return config

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        config.pop("dropout", None)
        config.pop("recurrent_dropout", None)
        return cls(**config)


class SimpleRNN(_Recurrent):
    """A fully connected RNN: ``h = tanh(x @ W + b + h_prev @ U)``."""

    _CELL = SimpleRNNCell


class LSTM(_Recurrent):
    """Long short-term memory over time (``recurrent_activation='sigmoid'``)."""

    _CELL = LSTMCell


class GRU(_Recurrent):
    """Gated recurrent unit over time (``reset_after=True``, Keras 2's default)."""

    _CELL = GRUCell
