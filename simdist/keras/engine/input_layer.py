"""``tf.keras.layers.InputLayer``: declares the input shape of a Sequential model."""

from __future__ import annotations

from simdist.keras.engine.base_layer import Layer

__all__ = ["InputLayer"]


class InputLayer(Layer):
    """An identity layer that carries ``input_shape`` (without the batch axis).

    As the first entry of a ``Sequential`` it makes the model build at construction; it is
    not listed in ``model.layers``.

    Raises:
        ValueError: neither ``input_shape`` nor ``batch_input_shape`` is given.
    """

    def __init__(self, input_shape=None, batch_size=None, dtype=None, name=None, **kwargs) -> None:
        if input_shape is None and "batch_input_shape" not in kwargs:
            raise ValueError(
                "InputLayer needs `input_shape` (without the batch axis) or `batch_input_shape`."
            )
        if input_shape is not None:
            kwargs["input_shape"] = input_shape
            kwargs["batch_size"] = batch_size
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.built = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape
