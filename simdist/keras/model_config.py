"""Sequential architectures to and from JSON-compatible dicts (``config.json`` of a saved model).

``sequential_config(model)`` describes a Sequential model as data: its name, trainability,
declared ``InputLayer``, the input shape it was built for, and each layer's class name with
its ``get_config()`` (nested Sequential models recursively). ``sequential_from_config``
rebuilds and builds it, creating variables in the current strategy scope.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.shape import TensorShape
from simdist.keras import layers as layers_module
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.sequential import Sequential

__all__ = [
    "sequential_config",
    "sequential_from_config",
    "builtin_layers",
    "input_shape_of",
    "json_default",
]

_UNSAVED_ATTRIBUTES = (
    "kernel_regularizer",
    "bias_regularizer",
    "kernel_constraint",
    "bias_constraint",
)


def builtin_layers() -> dict[str, type]:
    """Class name -> class for every layer of ``tf.keras.layers``, and ``Sequential``."""
    classes = [getattr(layers_module, name) for name in dir(layers_module)]
    found = {c.__name__: c for c in classes if isinstance(c, type) and issubclass(c, Layer)}
    found["Sequential"] = Sequential
    return found


def input_shape_of(model: Sequential):
    """The batch input shape (batch axis ``None``) the model was declared or built with."""
    shape = model._batch_input_shape or getattr(model, "_build_input_shape", None)
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    dims = list(shape)
    if not all(d is None or isinstance(d, (int, np.integer)) for d in dims):
        return None  # several inputs: not a Sequential's
    return [None, *(None if d is None else int(d) for d in dims[1:])]


def _layer_config(layer: Layer) -> dict:
    if isinstance(layer, Sequential):
        return {"class_name": "Sequential", "config": sequential_config(layer)}
    for attribute in _UNSAVED_ATTRIBUTES:
        if getattr(layer, attribute, None) is not None:
            raise NotImplementedError(
                f"Layer '{layer.name}' has a {attribute}, which simdist's saved-model format "
                "does not store. Save the weights with model.save_weights(path) and rebuild "
                "the model in code."
            )
    try:
        config = layer.get_config()
    except ValueError as exc:  # e.g. an activation given as a lambda
        raise ValueError(f"Cannot save layer '{layer.name}': {exc}") from None
    return {"class_name": type(layer).__name__, "config": config}


def sequential_config(model: Sequential) -> dict:
    """The JSON-compatible description of ``model`` (see the module docstring).

    Raises:
        NotImplementedError: a layer with a regularizer or constraint (not stored).
        ValueError: a layer whose configuration cannot be described (a lambda activation).
    """
    input_layer = model._input_layer
    return {
        "name": model.name,
        "trainable": model.trainable,
        "input_layer": None if input_layer is None else _layer_config(input_layer),
        "build_input_shape": input_shape_of(model),
        "layers": [_layer_config(layer) for layer in model.layers],
    }


def _layer_from_config(entry: dict, classes: dict[str, type], where: str) -> Layer:
    if not isinstance(entry, dict) or not {"class_name", "config"} <= set(entry):
        raise errors.DataLossError(f"{where}: a layer entry is malformed: {entry!r:.200}.")
    name = entry["class_name"]
    if name == "Sequential" and classes.get(name) is Sequential:
        return sequential_from_config(entry["config"], classes, where)
    cls = classes.get(name)
    if cls is None:
        raise ValueError(
            f"Unknown layer: '{name}' in {where}. A custom layer class must be passed to "
            f"load_model(path, custom_objects={{'{name}': {name}}})."
        )
    return cls.from_config(dict(entry["config"]))


def sequential_from_config(config: dict, classes: dict[str, type], where: str) -> Sequential:
    """Rebuild a model from :func:`sequential_config`'s output, built when its shape is known.

    Args:
        config: the description.
        classes: class name -> layer class (built-ins plus ``custom_objects``).
        where: the file the description came from, for error messages.

    Raises:
        ValueError: an unknown layer class.
        DataLossError: a malformed layer entry.
    """
    layers = [_layer_from_config(e, classes, where) for e in config.get("layers", [])]
    if config.get("input_layer") is not None:
        layers.insert(0, _layer_from_config(config["input_layer"], classes, where))
    model = Sequential(layers, name=config.get("name"))
    shape = config.get("build_input_shape")
    if not model.built and shape is not None:
        model.build(tuple(shape))
        object.__setattr__(model, "_build_input_shape", tuple(shape))
    if not config.get("trainable", True):
        model.trainable = False
    return model


def json_default(value):
    """``json.dumps``'s fallback: NumPy scalars and shapes; anything else is a TypeError."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, TensorShape):
        return value.as_list()
    raise TypeError(
        f"Cannot store {value!r} of type {type(value).__name__} in config.json: a layer's "
        "get_config() must return JSON-compatible values (numbers, strings, lists, dicts)."
    )
