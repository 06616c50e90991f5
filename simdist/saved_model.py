"""``tf.saved_model`` for Keras models: ``save``, ``load``, the ``serving_default`` signature.

simdist has no graphs, so it saves what it can restore honestly: a Keras model, written as
``model.save(export_dir)`` writes it (simdist's directory format, every byte covered by a
SHA-256 manifest; see ``simdist.keras.saving``), and loaded back as TF loads a Keras model's
SavedModel: an object that calls the model (``loaded(x)``), holds its variables, and has
``loaded.signatures["serving_default"]``, a function of the model's inputs (by keyword, or in
order) returning a dict of its outputs by output name, as TF's serving signature does
(Sequential: ``<first layer>_input`` -> ``<last layer>``; Functional: its input and output
names; subclassed: ``input_1``... -> ``output_1``...). Loading under ``strategy.scope()``
makes the variables that strategy's, so ``strategy.run(signature, args=(batch,))`` works.

Other trackables (a ``tf.Module`` with ``tf.function`` methods) are refused with
``NotImplementedError``: TF saves their functions as graphs, which simdist cannot write;
``tf.train.Checkpoint`` saves their variables. A SavedModel directory written by TensorFlow
is not readable either (simdist says so when asked).
"""

from __future__ import annotations

import os
from typing import Any

from simdist import errors
from simdist.checkpoint import container

__all__ = [
    "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "LoadOptions",
    "SaveOptions",
    "contains_saved_model",
    "load",
    "save",
]

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


class SaveOptions:
    """``tf.saved_model.SaveOptions``: accepted for compatibility; simdist writes files on
    the host, so ``experimental_io_device`` and the graph options change nothing."""

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_io_device=None, experimental_variable_policy=None,
                 experimental_custom_gradients=True, experimental_image_format=False,
                 experimental_skip_saver=False, experimental_sharding_callback=None,
                 extra_tags=None) -> None:  # fmt: skip
        self.experimental_io_device = experimental_io_device
        self.function_aliases = function_aliases
        self.namespace_whitelist = namespace_whitelist


class LoadOptions:
    """``tf.saved_model.LoadOptions``: accepted for compatibility (see :class:`SaveOptions`)."""

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False) -> None:  # fmt: skip
        self.allow_partial_checkpoint = allow_partial_checkpoint
        self.experimental_io_device = experimental_io_device


def _is_keras_model(obj: Any) -> bool:
    from simdist.keras.engine.training import Model

    return isinstance(obj, Model)


def save(obj, export_dir, signatures=None, options=None) -> None:
    """Save a Keras model so that :func:`load` (or ``tf.keras.models.load_model``) restores it.

    A model that has not been built yet (a subclassed model never called) is saved as TF
    saves it: without a signature or variables.

    Raises:
        NotImplementedError: ``obj`` is not a Keras model, or ``signatures`` asks for other
            functions than the model's own call.
    """
    if not _is_keras_model(obj):
        raise NotImplementedError(
            f"tf.saved_model.save of a {type(obj).__name__} is not in simdist: TF would save "
            "its tf.functions as graphs, which simdist does not have. Save a Keras model, or "
            "save the variables with tf.train.Checkpoint(module=...).write(path)."
        )
    if signatures is not None:
        raise NotImplementedError(
            "tf.saved_model.save(signatures=...) is not in simdist; the saved model serves "
            "its own call as 'serving_default'."
        )
    if not obj.built:  # TF saves it with no signature and no variables: so does simdist
        container.write_members(
            os.fspath(export_dir), UNBUILT_KIND, {_UNBUILT: obj.name.encode()}, directory=True
        )
        return
    obj.save(os.fspath(export_dir))


UNBUILT_KIND = "unbuilt-keras-model"  # the container of a model saved before it was built
_UNBUILT = "model_name.txt"


def contains_saved_model(export_dir) -> bool:
    """Whether ``export_dir`` holds a model saved by simdist."""
    from simdist.keras import saving

    path = os.fspath(export_dir)
    names = (saving.CONFIG_FILE, _UNBUILT)
    return any(os.path.isfile(os.path.join(path, name)) for name in names)


def load(export_dir, tags=None, options=None) -> _LoadedModel:
    """Load what :func:`save` wrote: a callable with ``variables`` and ``signatures``.

    Raises:
        FileNotFoundError: nothing saved at ``export_dir``.
        DataLossError: a file of it is damaged, or it is TensorFlow's own SavedModel.
    """
    from simdist.keras import saving

    path = os.fspath(export_dir)
    if os.path.isfile(os.path.join(path, "saved_model.pb")) and not contains_saved_model(path):
        raise errors.DataLossError(
            f"'{path}' is a SavedModel written by TensorFlow (saved_model.pb); simdist reads "
            "only the models it saved itself. Rebuild the model in simdist and load its "
            "weights instead."
        )
    if os.path.isfile(os.path.join(path, _UNBUILT)):
        kind, _ = container.read_members(path)  # verified like every other save
        if kind == UNBUILT_KIND:
            return _LoadedModel(None)
    return _LoadedModel(saving.load_model(path, compile=False, custom_objects=_defined_classes()))


def _defined_classes() -> dict[str, type]:
    """The Keras layer and model classes defined in this process beyond the built-in ones,
    by name (names defined twice left out): TF restores a subclassed model from its graphs
    without its class; simdist rebuilds it from its config, so it needs the class, and finds
    it among those the program has defined (never by importing anything)."""
    from simdist.keras import model_config
    from simdist.keras.engine.base_layer import Layer

    builtin = model_config.builtin_layers()
    found: dict[str, type] = {}
    twice: set[str] = set()
    stack = list(Layer.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        name = cls.__name__
        if name in builtin or cls.__module__.startswith("simdist."):
            continue
        if name in found and found[name] is not cls:
            twice.add(name)
        found[name] = cls
    return {name: _Revived(cls) for name, cls in found.items() if name not in twice}


class _Revived:
    """A user class as ``load`` rebuilds it: by its ``from_config``, or, when its
    constructor does not take its config (a subclassed model that does not override
    ``get_config``; Keras cannot rebuild those either, TF restores them from graphs), by
    calling it without arguments, as the program made it; the saved build shape and
    weights follow, and a mismatch is a clear error there."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.__name__ = cls.__name__

    def __call__(self, *args, **kwargs):
        return self.cls(*args, **kwargs)

    def from_config(self, config: dict):
        try:
            return self.cls.from_config(config)
        except TypeError as first:
            try:
                return self.cls()
            except TypeError:
                raise first from None


def _signature_names(model) -> tuple[list[str], list[str]]:
    """The serving signature's input and output names, as TF names them for this model."""
    from simdist.keras.engine.sequential import Sequential

    if isinstance(model, Sequential):
        layers = model.layers
        first = getattr(model, "_input_layer", None)
        inputs = [first.name if first is not None else f"{layers[0].name}_input"]
        return inputs, [layers[-1].name]
    if hasattr(model, "input_names") and model.input_names is not None:
        return list(model.input_names), list(model.output_names)
    count = len(model._build_input_shape) if isinstance(model._build_input_shape, list) else 1
    return [f"input_{i + 1}" for i in range(count)], []


class _ServingSignature:
    """``loaded.signatures["serving_default"]``: the model's inputs by name (or in order)
    to a dict of its outputs by name."""

    def __init__(self, model) -> None:
        self._model = model
        self._inputs, self._outputs = _signature_names(model)

    def __call__(self, *args, **kwargs) -> dict:
        names = self._inputs
        if len(args) > len(names):
            raise TypeError(
                f"The serving signature takes {len(names)} input(s) ({names}); got "
                f"{len(args)} positional arguments."
            )
        bound = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in names or key in bound:
                raise TypeError(
                    f"The serving signature's inputs are {names}; got an unexpected or repeated "
                    f"argument {key!r}."
                )
            bound[key] = value
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"The serving signature is missing input(s) {missing}.")
        values = [bound[n] for n in names]
        outputs = self._model(values[0] if len(values) == 1 else values, training=False)
        flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        keys = self._outputs or [f"output_{i + 1}" for i in range(len(flat))]
        if isinstance(outputs, dict):
            return dict(outputs)
        return dict(zip(keys, flat, strict=True))


class _LoadedModel:
    """What :func:`load` returns (TF's restored object of a Keras model); for a model saved
    before it was built, as TF: no signatures, no variables, nothing to call."""

    def __init__(self, model) -> None:
        self._model = model
        self.signatures = (
            {} if model is None else {DEFAULT_SERVING_SIGNATURE_DEF_KEY: _ServingSignature(model)}
        )

    def __call__(self, inputs, training=False, mask=None):
        if self._model is None:
            raise ValueError(
                "This model was saved before it was built (never called, no input shape): it "
                "has no function to call. Build it before tf.saved_model.save."
            )
        return self._model(inputs, training=training)

    @property
    def variables(self) -> list:
        return [] if self._model is None else self._model.variables

    @property
    def trainable_variables(self) -> list:
        return [] if self._model is None else self._model.trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return [] if self._model is None else self._model.non_trainable_variables

    @property
    def keras_api(self):
        """The restored Keras model itself (TF keeps it there as well)."""
        return self._model
