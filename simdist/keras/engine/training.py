"""``tf.keras.Model`` for subclassing: a Layer that lists its layers and builds by a trial call.

``compile``/``fit``/``evaluate``/``predict`` arrive with the training-loop package. The
functional form ``Model(inputs, outputs)`` is not supported.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.shape import as_shape
from simdist.keras.engine.base_layer import Layer

__all__ = ["Model"]


class Model(Layer):
    """A model defined by subclassing: layers as attributes, computation in ``call``.

    Raises:
        NotImplementedError: ``Model(inputs, outputs)`` (the functional API).
    """

    def __init__(self, *args, **kwargs) -> None:
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise NotImplementedError(
                "simdist does not implement the functional API (Model(inputs, outputs)); "
                "subclass tf.keras.Model or use tf.keras.Sequential."
            )
        super().__init__(**kwargs)

    @property
    def layers(self) -> list:
        """The model's direct sub-layers, in the order their attributes were assigned."""
        return self._flatten_layers(include_self=False, recursive=False)

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """A direct sub-layer by ``name`` or by ``index`` in :attr:`layers`.

        Raises:
            ValueError: no such layer, or neither or both of ``name`` and ``index`` given.
        """
        if (name is None) == (index is None):
            raise ValueError("Provide exactly one of `name` or `index` to get_layer.")
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only has "
                    f"{len(layers)} layers."
                )
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[x.name for x in layers]}.")

    def build(self, input_shape) -> None:
        """Build by calling the model once on zeros of ``input_shape`` (None dims as 1).

        Raises:
            ValueError: ``input_shape`` is None.
        """
        if input_shape is None:
            raise ValueError(
                "Input shape must be defined when calling `build()` on a `Model` subclass."
            )
        if self.built:
            return
        shape = [1 if d is None else d for d in as_shape(input_shape).as_list()]
        probe = convert_to_tensor(np.zeros(shape, self.dtype))
        object.__setattr__(self, "built", True)
        try:
            if self._expects_training_arg:
                self(probe, training=False)
            else:
                self(probe)
        except Exception:
            object.__setattr__(self, "built", False)
            raise

    build._is_default = True  # a first call builds sub-layers itself; no trial call then
