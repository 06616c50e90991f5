"""Model architectures to and from JSON-compatible dicts (``config.json`` of a saved model).

``model_to_config(model)`` / ``model_from_config(entry, classes, where)`` handle the three
kinds of model, each as ``{"class_name": ..., "config": ...}``:

* ``Sequential``: its name, trainability, declared ``InputLayer``, the input shape it was
  built for, and each layer's class name with its ``get_config()``.
* ``Functional``: Keras 2's schema (``simdist.keras.functional_config``): the layers, each
  with its ``inbound_nodes``, and ``input_layers``/``output_layers``. Configs of simdist's
  older schema (the calls in running order as ``nodes``, each argument tensor written
  ``{"keras_tensor": [layer, call, output]}``, and ``inputs``/``outputs``) still load.
* A subclassed model or layer (as Keras): its ``get_config()`` and, for a model, the input
  shape it was built with; rebuilt by ``cls.from_config(config)`` (``cls`` from
  ``custom_objects``) and built on that shape. A class whose ``__init__`` takes arguments of
  its own must override ``get_config`` (Keras raises the same NotImplementedError).

Nested models (a Sequential or Functional model used as a layer) are described recursively.
Variables are created in the current strategy scope when rebuilding.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.shape import TensorShape
from simdist.keras import layers as layers_module
from simdist.keras.engine.base_layer import Layer
from simdist.keras.engine.sequential import Sequential

__all__ = [
    "model_to_config",
    "model_from_config",
    "functional_config",
    "functional_from_config",
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
    """Class name -> class for every layer of ``tf.keras.layers``, and the model classes."""
    from simdist.keras.engine.functional import Functional
    from simdist.keras.layers import experimental, tf_op_layer

    classes = [getattr(layers_module, name) for name in dir(layers_module)]
    classes += [getattr(experimental, name) for name in dir(experimental)]
    found = {c.__name__: c for c in classes if isinstance(c, type) and issubclass(c, Layer)}
    found["Sequential"] = Sequential
    found["Functional"] = Functional
    found["TFOpLambda"] = tf_op_layer.TFOpLambda
    found["SlicingOpLambda"] = tf_op_layer.SlicingOpLambda
    return found


_BASE_INIT_ARGS = {"self", "trainable", "name", "dtype", "dynamic", "kwargs", "args"}


def _check_get_config(layer) -> None:
    """Keras's rule: a class with ``__init__`` arguments of its own overrides get_config."""
    import inspect

    cls = type(layer)
    if cls.__module__.startswith("simdist."):
        return
    defining = next(c for c in cls.__mro__ if "get_config" in c.__dict__)
    if defining.__module__.startswith("simdist."):
        params = inspect.signature(cls.__init__).parameters
        own = [p for p in params if p not in _BASE_INIT_ARGS]
        if own:
            raise NotImplementedError(
                f"Layer {cls.__name__} has arguments {own} in `__init__` and therefore must "
                "override `get_config()` (and, when its arguments are not plain values, "
                "`from_config()`) to be saved. Load it with "
                f"custom_objects={{'{cls.__name__}': {cls.__name__}}}."
            )


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
    from simdist.keras.engine.training import Model

    if isinstance(layer, Model):
        return model_to_config(layer)
    _check_get_config(layer)
    from simdist.keras import constraints, regularizers

    for attribute in _UNSAVED_ATTRIBUTES:
        value = getattr(layer, attribute, None)
        if value is not None and not isinstance(
            value, (regularizers.Regularizer, constraints.Constraint)
        ):
            raise NotImplementedError(
                f"Layer '{layer.name}' has a {attribute} that is a plain function, which "
                "simdist's saved-model format does not store (a tf.keras.regularizers / "
                "constraints object is stored). Use such an object, or save the weights with "
                "model.save_weights(path) and rebuild the model in code."
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
    if name in ("Sequential", "Functional") or "build_input_shape" in entry:
        return model_from_config(entry, classes, where)
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
    if value is Ellipsis or isinstance(value, dtypes.DType):  # an op layer's arguments
        from simdist.keras import functional_config as keras_schema

        return keras_schema.json_default(value)
    raise TypeError(
        f"Cannot store {value!r} of type {type(value).__name__} in config.json: a layer's "
        "get_config() must return JSON-compatible values (numbers, strings, lists, dicts)."
    )


# --- every kind of model ---------------------------------------------------------------------
def model_to_config(model) -> dict:
    """``{"class_name", "config"}`` of a Sequential, Functional or subclassed model.

    Raises:
        NotImplementedError: a layer that must override ``get_config`` (see the docstring),
            or one with a regularizer/constraint that is no Keras object.
        ValueError: a layer whose configuration cannot be described (a Lambda).
    """
    from simdist.keras.engine.functional import Functional

    if type(model) is Sequential:
        return {"class_name": "Sequential", "config": sequential_config(model)}
    if type(model) is Functional:
        return {"class_name": "Functional", "config": functional_config(model)}
    _check_get_config(model)
    shape = getattr(model, "_build_input_shape", None)
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    return {
        "class_name": type(model).__name__,
        "config": model.get_config(),
        "build_input_shape": None if shape is None else list(shape),
    }


def model_from_config(entry: dict, classes: dict[str, type], where: str):
    """Rebuild what :func:`model_to_config` described.

    Raises:
        ValueError: a class that is neither built in nor in ``classes`` (custom_objects).
        DataLossError: a malformed description.
    """
    name = entry.get("class_name")
    config = entry.get("config")
    if not isinstance(config, dict):
        raise errors.DataLossError(f"{where}: the model entry has no config: {entry!r:.200}.")
    if name == "Sequential" and classes.get(name) is Sequential:
        return sequential_from_config(config, classes, where)
    if name == "Functional" and classes.get(name).__name__ == "Functional":
        return functional_from_config(config, classes, where)
    cls = classes.get(name)
    if cls is None:
        raise ValueError(
            f"Unknown model or layer class '{name}' in {where}. It is a subclass defined in "
            f"Python: pass it to load_model(path, custom_objects={{'{name}': {name}}})."
        )
    model = cls.from_config(dict(config))
    shape = entry.get("build_input_shape")
    if shape is not None and not model.built:
        model.build(tuple(shape))
    return model


def functional_config(model) -> dict:
    """Keras 2's config of a Functional model (``simdist.keras.functional_config``)."""
    from simdist.keras import functional_config as keras_schema

    return keras_schema.functional_config(model, _layer_config)


def functional_from_config(config: dict, classes: dict[str, type], where: str):
    """Rebuild a Functional model from its config: Keras 2's schema (what
    :func:`functional_config` writes, and tf_keras), or simdist's older ``nodes`` one."""
    from simdist.core import nest
    from simdist.keras import functional_config as keras_schema

    if keras_schema.is_keras_schema(config):
        return keras_schema.functional_from_config(
            config, lambda entry: _layer_from_config(entry, classes, where), where
        )
    from simdist.keras.engine.functional import Functional
    from simdist.keras.engine.input_layer import InputLayer

    try:
        layers = {}
        for entry in config["layers"]:
            layers[entry["name"]] = _layer_from_config(entry, classes, where)
        produced: dict[tuple[str, int], object] = {}
        calls: dict[str, int] = {}
        for name, layer in layers.items():
            if isinstance(layer, InputLayer):
                produced[(name, 0)] = layer._symbolic_output()
                calls[name] = 1

        def resolve(item):
            if isinstance(item, dict) and set(item) == {"keras_tensor"}:
                layer_name, k, index = item["keras_tensor"]
                outputs = produced[(layer_name, k)]
                return nest.flatten(outputs)[index]
            if isinstance(item, dict):
                return {k: resolve(v) for k, v in item.items()}
            if isinstance(item, list):
                return [resolve(v) for v in item]
            return item

        for node in config["nodes"]:
            layer = layers[node["layer"]]
            args = resolve(node["args"])
            kwargs = resolve(node["kwargs"])
            k = calls.get(node["layer"], 0)
            calls[node["layer"]] = k + 1
            produced[(node["layer"], k)] = layer(*args, **kwargs)
        inputs = resolve(config["inputs"])
        outputs = resolve(config["outputs"])
    except (KeyError, TypeError, IndexError) as exc:
        raise errors.DataLossError(
            f"{where}: the Functional model description is malformed ({exc!r})."
        ) from None
    model = Functional(inputs, outputs, name=config.get("name"))
    if not config.get("trainable", True):
        model.trainable = False
    return model
