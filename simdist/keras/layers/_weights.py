"""A layer's weight regularizers and constraints, resolved by name and described in config."""

from __future__ import annotations

from simdist.keras import constraints, regularizers

__all__ = ["WeightOptions", "add_kernel_and_bias", "weight_options", "weight_options_config"]


class WeightOptions(dict):
    """``{'kernel_regularizer': ..., 'bias_constraint': ...}``, each resolved with
    ``regularizers.get`` / ``constraints.get``."""

    def config(self) -> dict:
        """The options for ``get_config``: ``None`` or a serialized object.

        Raises:
            ValueError: a plain-function regularizer or constraint (Keras cannot store it
                either); pass a ``tf.keras.regularizers``/``constraints`` object to save.
        """
        out = {}
        for key, value in self.items():
            if value is None:
                out[key] = None
            elif key.endswith("regularizer"):
                out[key] = regularizers.serialize(value)
            else:
                out[key] = constraints.serialize(value)
        return out


def weight_options(**options) -> WeightOptions:
    """Resolve each ``*_regularizer`` / ``*_constraint`` keyword."""
    out = WeightOptions()
    for key, value in options.items():
        getter = regularizers.get if key.endswith("regularizer") else constraints.get
        out[key] = getter(value)
    return out


def weight_options_config(layer) -> dict:
    """``kernel/bias_regularizer/constraint`` of a Dense-like layer, for its get_config."""
    return WeightOptions(
        (key, getattr(layer, key))
        for key in (
            "kernel_regularizer",
            "bias_regularizer",
            "kernel_constraint",
            "bias_constraint",
        )
    ).config()


def add_kernel_and_bias(layer, kernel_shape: list, bias_size, use_bias=None) -> None:
    """``layer.kernel`` (and ``layer.bias`` when ``use_bias``, by default ``layer.use_bias``,
    else None) from the layer's ``kernel_*`` / ``bias_*`` initializer, regularizer and
    constraint attributes; ``bias_size`` is a length or a whole shape."""
    layer.kernel = layer.add_weight(
        "kernel",
        shape=list(kernel_shape),
        initializer=layer.kernel_initializer,
        regularizer=layer.kernel_regularizer,
        constraint=layer.kernel_constraint,
    )
    layer.bias = None
    if layer.use_bias if use_bias is None else use_bias:
        layer.bias = layer.add_weight(
            "bias",
            shape=[bias_size] if isinstance(bias_size, int) else list(bias_size),
            initializer=layer.bias_initializer,
            regularizer=layer.bias_regularizer,
            constraint=layer.bias_constraint,
        )
