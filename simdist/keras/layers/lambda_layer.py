"""``Lambda``: a layer that applies a Python function (``Lambda(lambda x: x * 2)``).

Its function is code, so a model holding one cannot be saved with ``model.save`` (as in
Keras, whose safe mode refuses to load one); ``get_config`` raises a ValueError saying so.
"""

from __future__ import annotations

import inspect

from simdist.keras.engine.base_layer import Layer

__all__ = ["Lambda"]


class Lambda(Layer):
    """``function(inputs, **arguments)`` as a layer (it holds no weights of its own).

    Raises:
        TypeError: ``function`` is not callable.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs) -> None:
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda needs a callable, got {function!r}.")
        object.__setattr__(self, "function", function)
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        params = inspect.signature(function).parameters
        object.__setattr__(self, "_fn_expects_training", "training" in params)
        object.__setattr__(self, "_fn_expects_mask", "mask" in params)
        object.__setattr__(self, "mask", mask)
        self.supports_masking = True

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_expects_training:
            kwargs["training"] = training
        if self._fn_expects_mask:
            kwargs["mask"] = mask
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        """As Keras 2: ``mask(inputs, mask)`` when ``mask`` is a function, else ``mask``
        itself (None by default: the output has no mask)."""
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def get_config(self) -> dict:
        raise ValueError(
            f"Lambda layer '{self.name}' holds a Python function, which simdist's model config "
            "does not store. Replace it by a layer class of your own (with get_config) and "
            "pass that class in custom_objects when loading, or save the weights only."
        )
