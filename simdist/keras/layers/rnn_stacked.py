"""``StackedRNNCells``: cells run one after another within each time step, as one cell.

At each step the first cell reads the step's input, each later cell reads the output of
the one before, and the last cell's output is the step's output. ``state_size`` is the tuple
of the cells' state sizes (each cell's own, an int or a list), and the states travel
through the steps as one flat list, the first cell's first; ``RNN(..., return_state=True)``
returns them after the output grouped per cell (a tensor for a cell with one state, a list
for one with several), as Keras 2. ``RNN([cell, cell])`` wraps its list in one.
"""

from __future__ import annotations

from simdist.core import nest
from simdist.core.shape import TensorShape
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers.wrappers import deserialize_layer, serialize_layer

__all__ = ["StackedRNNCells"]


def _count(size) -> int:
    return len(size) if isinstance(size, (list, tuple)) else 1


def _output_size(cell) -> int:
    size = getattr(cell, "output_size", None)
    if size is not None:
        return int(size)
    state = cell.state_size
    return int(state[0] if isinstance(state, (list, tuple)) else state)


class StackedRNNCells(Layer):
    """Wrap a list of RNN cells so that they step together (see the module docstring).

    Raises:
        ValueError: a cell without ``call`` or ``state_size``; ``reverse_state_order``
            (Keras 2 refuses it in TF 2 too).
    """

    def __init__(self, cells, **kwargs) -> None:
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError(f"All cells must have a `call` method. Received cell: {cell}")
            if "state_size" not in dir(cell):
                raise ValueError(
                    f"All cells must have a `state_size` attribute. Received cell: {cell}"
                )
        if kwargs.pop("reverse_state_order", False):
            raise ValueError("reverse_state_order=True in StackedRNNCells is not supported.")
        super().__init__(**kwargs)
        self.cells = list(cells)

    @property
    def state_size(self) -> tuple:
        return tuple(cell.state_size for cell in self.cells)

    @property
    def output_size(self) -> int:
        return _output_size(self.cells[-1])

    def build(self, input_shape) -> None:
        features = int(TensorShape(input_shape)[-1])
        batch = TensorShape(input_shape)[0]
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell._maybe_build(TensorShape([batch, features]))
            features = _output_size(cell)
        self.built = True

    def call(self, inputs, states, training=None):
        flat = nest.flatten(states)
        outputs, new_states, start = inputs, [], 0
        for cell in self.cells:
            count = _count(cell.state_size)
            own = flat[start : start + count]
            start += count
            outputs, own_new = cell.call(outputs, own, training=training)
            new_states.extend(nest.flatten(own_new))
        return outputs, new_states

    def nest_states(self, flat: list) -> list:
        """The flat states grouped per cell as Keras 2 returns them: a cell with one state
        (an int ``state_size``) gives its tensor, one with several a list of them."""
        grouped, start = [], 0
        for cell in self.cells:
            size = cell.state_size
            count = _count(size)
            own = list(flat[start : start + count])
            start += count
            grouped.append(own if isinstance(size, (list, tuple)) else own[0])
        return grouped

    def get_config(self) -> dict:
        return {**super().get_config(), "cells": [serialize_layer(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize_layer(entry, custom_objects) for entry in config.pop("cells")]
        return cls(cells, **config)
