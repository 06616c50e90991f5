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

    Raises:
        NotImplementedError: ``obj`` is not a Keras model, or ``signatures`` asks for other
            functions than the model's own call.
        ValueError: the model has not been built (call it once, or give an input shape).
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
    if not obj.built:
        raise ValueError(
            f"The model {obj.name!r} has not been built: call it on a batch, or give its first "
            "layer an input shape, before saving it."
        )
    obj.save(os.fspath(export_dir))


def contains_saved_model(export_dir) -> bool:
    """Whether ``export_dir`` holds a model saved by simdist."""
    from simdist.keras import saving

    return os.path.isfile(os.path.join(os.fspath(export_dir), saving.CONFIG_FILE))


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
    return _LoadedModel(saving.load_model(path, compile=False))


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
    """What :func:`load` returns (TF's restored object of a Keras model)."""

    def __init__(self, model) -> None:
        self._model = model
        self.signatures = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: _ServingSignature(model)}

    def __call__(self, inputs, training=False, mask=None):
        return self._model(inputs, training=training)

    @property
    def variables(self) -> list:
        return self._model.variables

    @property
    def trainable_variables(self) -> list:
        return self._model.trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return self._model.non_trainable_variables

    @property
    def keras_api(self):
        """The restored Keras model itself (TF keeps it there as well)."""
        return self._model
