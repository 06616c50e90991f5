"""``tf.keras.Sequential``: a plain stack of layers, each feeding the next.

When the first layer declares its input (``input_shape=`` or an ``InputLayer``), the model
and every layer are built at construction, as Keras does; otherwise on the first call.
Building propagates shapes with each layer's ``compute_output_shape``. As in Keras, the
Sequential model opens no name scope of its own: its variables are ``dense/kernel:0``.
"""

from __future__ import annotations

from simdist.core.name_scope import outside_name_scopes
from simdist.core.shape import TensorShape, as_shape
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.input_layer import InputLayer
from simdist.keras.engine.keras_tensor import KerasTensor
from simdist.keras.engine.training import Model

__all__ = ["Sequential"]


class Sequential(Model):
    """``tf.keras.Sequential(layers=None, name=None)``.

    Raises:
        TypeError: an entry that is not a layer.
        ValueError: two layers with the same name.
    """

    _OPENS_NAME_SCOPE = False

    def __init__(self, layers=None, name=None) -> None:
        super().__init__(name=name)
        self._stack = []
        self._input_layer = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list:
        return list(self._stack)

    def add(self, layer: Layer) -> None:
        """Append ``layer``; build now when the model's input shape becomes known.

        Raises:
            TypeError: ``layer`` is not a Keras layer.
            ValueError: a layer of this model already has ``layer``'s name.
        """
        if isinstance(layer, KerasTensor) and isinstance(layer._keras_history[0], InputLayer):
            layer = layer._keras_history[0]  # model.add(tf.keras.Input(shape)), as Keras
        if isinstance(layer, InputLayer):
            if self._stack or self._input_layer is not None:
                raise ValueError("An InputLayer can only be the first layer of a Sequential.")
            self._input_layer = layer
            self._set_input_shape(layer._batch_input_shape)
            return
        if not isinstance(layer, Layer):
            raise TypeError(
                "The added layer must be an instance of class Layer. "
                f"Received: layer={layer!r} of type {type(layer)}."
            )
        if any(existing.name == layer.name for existing in self._stack):
            raise ValueError(
                "All layers added to a Sequential model should have unique names. Name "
                f'"{layer.name}" is already the name of a layer in this model. Update the '
                "`name` argument to pass a unique name."
            )
        self._stack.append(layer)
        if len(self._stack) == 1 and self._input_layer is None and layer._batch_input_shape:
            object.__setattr__(self, "_batch_input_shape", tuple(layer._batch_input_shape))
        if self._batch_input_shape is not None:
            self.build(self._batch_input_shape)

    def save_spec(self, dynamic_batch: bool = True):
        """``Model.save_spec`` named as Keras 2 names a Sequential's input: the input layer's
        name, or ``<first layer>_input``."""
        spec = super().save_spec(dynamic_batch)
        if spec is None or not self._stack:
            return spec
        (only,), kwargs = spec
        first = self._input_layer
        name = first.name if first is not None else f"{self._stack[0].name}_input"
        dtype = first.dtype if first is not None and first.dtype else only.dtype
        return [type(only)(only.shape, dtype, name=name)], kwargs

    def pop(self) -> None:
        """Remove the last layer.

        Raises:
            TypeError: the model has no layers.
        """
        if not self._stack:
            raise TypeError("There are no layers in the model.")
        self._stack.pop()

    def _set_input_shape(self, batch_input_shape) -> None:
        object.__setattr__(self, "_batch_input_shape", tuple(batch_input_shape))
        if self._stack:
            self.build(batch_input_shape)

    def build(self, input_shape=None) -> None:
        """Build every layer for ``input_shape`` (including the batch axis), outside any
        ``tf.name_scope`` (Keras builds a Sequential model as a graph of its own).

        Raises:
            ValueError: no input shape is given or known.
        """
        with outside_name_scopes():
            self._build_layers(input_shape)

    def _build_layers(self, input_shape=None) -> None:
        """Build every layer for ``input_shape`` (including the batch axis).

        Raises:
            ValueError: no input shape is given or known.
        """
        if input_shape is None:
            input_shape = self._batch_input_shape
        if input_shape is None:
            raise ValueError(
                "You must provide an `input_shape` argument (including the batch axis, e.g. "
                "(None, 28, 28, 1))."
            )
        if isinstance(input_shape, (list, tuple)) and any(
            isinstance(d, (TensorShape, list, tuple)) for d in input_shape
        ):  # several inputs (a first Concatenate): each layer builds when it is called
            object.__setattr__(self, "_build_input_shape", input_shape)
            object.__setattr__(self, "built", True)
            return
        shape = as_shape(input_shape)
        object.__setattr__(self, "_build_input_shape", shape)  # what model.save records
        for layer in self._stack:
            layer._maybe_build(shape)
            shape = as_shape(layer.compute_output_shape(shape))
        object.__setattr__(self, "built", True)

    def call(self, inputs, training=None, mask=None):
        outputs = inputs
        for layer in self._stack:
            if training is None:
                outputs = layer(outputs)
            else:
                outputs = layer(outputs, training=training)
        return outputs

    def _trackable_children(self, skip: tuple[str, ...] = ()) -> dict:
        """``layer_with_weights-<j>`` (the j-th layer with weights now) and ``layer-<i>`` per
        layer, as Keras names them, then the model's own weights and tracked attributes.
        ``layer-<i>`` exists before the model is built: a restore finds unbuilt layers so."""
        layers = self.layers
        out: dict = {}
        for j, layer in enumerate([layer for layer in layers if layer.weights]):
            out[f"layer_with_weights-{j}"] = layer
        for i, layer in enumerate(layers):
            out[f"layer-{i}"] = layer
        out.update(super()._trackable_children(skip=(*skip, "_stack", "_input_layer")))
        return out

    def compute_output_shape(self, input_shape) -> TensorShape:
        shape = as_shape(input_shape)
        for layer in self._stack:
            shape = as_shape(layer.compute_output_shape(shape))
        return shape
