"""The schema of a saved model's ``config.json``, checked on load before anything is built.

The bytes of ``config.json`` are already verified against the model's manifest
(``simdist.checkpoint.container``); this checks what they say, so a file written by another
tool or version, or edited by hand with a recomputed manifest, is refused with the field it
gets wrong instead of loading a different model:

* the top level has exactly ``format``, ``format_version``, ``simdist_version``, ``model``,
  ``weights`` and optionally ``training_config`` (a renamed ``training_config`` is an
  unknown field, never a silently uncompiled model);
* ``model`` is ``{"class_name", "config"}`` (a subclassed model's also ``build_input_shape``);
* ``weights`` is a list of ``{"key", "name", "dtype", "shape"}``;
* ``training_config`` has ``optimizer`` (``{"class_name", "config"}``, Keras 2's ``module``
  and ``registered_name`` allowed) and ``loss``, and may have ``metrics``, ``loss_weights``,
  ``weighted_metrics``; the optimizer's ``config`` has exactly the fields that optimizer's
  ``get_config()`` has, each of the type of its default (a number stays a number, a flag a
  flag).
"""

from __future__ import annotations

from simdist import errors

__all__ = ["validate_config", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "simdist-keras-model"
FORMAT_VERSION = 2
_REQUIRED = ("format", "format_version", "simdist_version", "model", "weights")
_OPTIONAL = ("training_config",)


def _fail(where: str, what: str) -> errors.DataLossError:
    return errors.DataLossError(
        f"Saved model config {where} does not match its schema: {what}. It was not written "
        "by this simdist or was edited; save the model again."
    )


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_weights(weights, where: str) -> None:
    if not isinstance(weights, list):
        raise _fail(where, "'weights' is not a list")
    for n, entry in enumerate(weights):
        if (
            not isinstance(entry, dict)
            or set(entry) != {"key", "name", "dtype", "shape"}
            or not all(isinstance(entry[k], str) for k in ("key", "name", "dtype"))
            or not isinstance(entry["shape"], list)
            or not all(_is_int(d) and d >= 0 for d in entry["shape"])
        ):
            raise _fail(where, f"weights[{n}] is not {{key, name, dtype, shape}}")


def _same_kind(value, default) -> bool:
    if default is None:
        return (
            value is None
            or isinstance(value, (int, float, str, dict))
            and not isinstance(value, bool)
        )
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float, dict)) and not isinstance(value, bool)
    return isinstance(value, type(default))


_TRAINING_FIELDS = {"optimizer", "loss", "metrics", "loss_weights", "weighted_metrics"}
_OPTIMIZER_FIELDS = {"class_name", "config", "module", "registered_name"}


def _check_training_config(config, where: str, optimizer_defaults) -> None:
    if not isinstance(config, dict) or not {"optimizer", "loss"} <= set(config):
        raise _fail(where, "'training_config' lacks 'optimizer' or 'loss'")
    unknown = sorted(set(config) - _TRAINING_FIELDS)
    if unknown:
        raise _fail(where, f"training_config has unknown fields {unknown}")
    loss = config["loss"]
    if loss is not None and not isinstance(loss, (str, dict, list)):
        raise _fail(where, "training_config.loss is neither a name, a config nor null")
    metrics = config.get("metrics", [])
    if metrics is not None and not isinstance(metrics, (list, dict)):
        raise _fail(where, "training_config.metrics is not a list")
    optimizer = config["optimizer"]
    if (
        not isinstance(optimizer, dict)
        or not {"class_name", "config"} <= set(optimizer) <= _OPTIMIZER_FIELDS
        or not isinstance(optimizer["class_name"], str)
        or not isinstance(optimizer["config"], dict)
    ):
        raise _fail(where, "training_config.optimizer is not {class_name, config}")
    defaults = optimizer_defaults(optimizer["class_name"])
    if defaults is None:
        raise _fail(where, f"unknown optimizer class {optimizer['class_name']!r}")
    saved = optimizer["config"]
    if set(saved) != set(defaults):
        extra = sorted(set(saved) - set(defaults))
        missing = sorted(set(defaults) - set(saved))
        raise _fail(
            where,
            f"optimizer {optimizer['class_name']} config has unknown fields {extra} and "
            f"lacks {missing}",
        )
    for name, value in saved.items():
        if not _same_kind(value, defaults[name]):
            raise _fail(
                where,
                f"optimizer field {name!r} is {value!r}, not a {type(defaults[name]).__name__}",
            )


def validate_config(document, where: str, optimizer_defaults) -> dict:
    """Check a parsed ``config.json``; return it.

    Args:
        document: the parsed JSON.
        where: the file, for messages.
        optimizer_defaults: ``class name -> get_config() of a default instance`` (or None
            for an unknown class).

    Raises:
        DataLossError: a field is unknown, missing or of the wrong type.
        UnimplementedError: a newer format version.
    """
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise _fail(where, f"it is not a {FORMAT_NAME} document")
    version = document.get("format_version")
    if not _is_int(version) or version != FORMAT_VERSION:
        raise errors.UnimplementedError(
            f"Saved model config {where} has format version {version!r}; this simdist reads "
            f"version {FORMAT_VERSION}."
        )
    unknown = sorted(set(document) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise _fail(where, f"unknown fields {unknown}")
    missing = [k for k in _REQUIRED if k not in document]
    if missing:
        raise _fail(where, f"missing fields {missing}")
    if not isinstance(document["simdist_version"], str):
        raise _fail(where, "'simdist_version' is not a string")
    model = document["model"]
    if not isinstance(model, dict) or not (
        {"class_name", "config"} <= set(model) <= {"class_name", "config", "build_input_shape"}
    ):
        raise _fail(where, "'model' is not {class_name, config[, build_input_shape]}")
    if not isinstance(model["class_name"], str) or not isinstance(model["config"], dict):
        raise _fail(where, "'model' has a bad class_name or config")
    shape = model.get("build_input_shape")
    if shape is not None and not (
        isinstance(shape, list) and all(d is None or _is_int(d) for d in shape)
    ):
        raise _fail(where, "'model.build_input_shape' is not a list of sizes")
    _check_weights(document["weights"], where)
    if "training_config" in document:
        _check_training_config(document["training_config"], where, optimizer_defaults)
    return document
