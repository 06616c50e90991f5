"""``model.save`` / ``load_model`` / ``save_weights`` / ``load_weights``: simdist's saved files.

The file names users write are honoured, each mapped to simdist's own pickle-free format
(plain JSON and NumPy archives, every byte covered by a SHA-256 manifest,
``simdist.checkpoint.container``):

================================  ==============================================================
``model.save("m.keras")``         one *bundle* file (``.h5``/``.hdf5`` too): architecture,
                                  weights, compile state
``model.save("m")``               a directory (TF's SavedModel name): the same members as files,
                                  with ``manifest.json``
``save_weights("w.weights.h5")``  one bundle file (any ``.h5``): the weights as an object-graph
                                  checkpoint, so a later ``glob("*.weights.h5")`` finds one file
                                  per save and ``load_weights`` reads it
``save_weights("ckpt/w")``        a ``tf.train.Checkpoint`` at prefix ``ckpt/w`` (``.index`` +
                                  data file), recorded in the directory's ``checkpoint`` file
``save_weights("dir/")``          an existing directory (or a path ending in ``/``): the
                                  prefix ``dir/weights`` inside it; ``load_weights("dir")``
                                  reads the directory's latest checkpoint
================================  ==============================================================

**A ``.keras`` or ``.h5`` file written by simdist is not a zip archive nor an HDF5 file**:
Keras and h5py cannot open it, and simdist cannot open theirs (it says so when asked). The
suffix only chooses the single-file form.

Members of a saved model: ``config.json`` (architecture, the weights table and the compile
settings, validated against ``saving_schema`` on load), ``weights.npz`` (``model.weights`` in
order, read with ``allow_pickle=False``) and, for a compiled model, ``optimizer.index`` +
``optimizer.data-<h>.npz``: a ``tf.train.Checkpoint(model=..., optimizer=...)`` with the
optimizer's state (iterations, slots), so ``load_model(compile=True)`` resumes training where
it stopped. Each layer's config is its ``get_config()``; ``from_config`` rebuilds it (classes
outside ``tf.keras.layers`` come from ``custom_objects``).

Loading verifies the manifest and every member before any variable is created; damage is
``DataLossError`` naming the file. Saving replaces atomically (one rename for a file, one
exchange for a directory) and removes the leftovers of killed saves.

A compiled model's ``training_config`` holds the optimizer, loss and metrics (names, or
class + config: see :mod:`simdist.keras.compile_config`).

Sequential and Functional models are saved as data; a subclassed model as its class name,
``get_config()`` and build shape, as Keras does (load it with ``custom_objects``); see
``simdist.keras.model_config``.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import warnings

import numpy as np

from simdist import errors
from simdist.checkpoint import container
from simdist.checkpoint.checkpoint import Checkpoint
from simdist.checkpoint.format import checkpoint_exists, data_files
from simdist.checkpoint.state import latest_checkpoint, update_checkpoint_state
from simdist.core.trackable import VARIABLE_VALUE, tensors_of
from simdist.keras import model_config, saving_schema
from simdist.keras.engine.sequential import Sequential
from simdist.keras.object_registration import with_custom_objects

__all__ = [
    "save_model",
    "load_model",
    "save_weights",
    "load_weights",
    "save_for_callback",
    "FORMAT_NAME",
]

FORMAT_NAME = saving_schema.FORMAT_NAME
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.npz"
OPTIMIZER_PREFIX = "optimizer"
WEIGHTS_PREFIX = "weights"
MODEL_KIND = "keras-model"
WEIGHTS_KIND = "keras-weights"
_FILE_SUFFIXES = (".keras", ".h5", ".hdf5")


def _is_file_form(path: str, save_format=None) -> bool:
    if save_format in ("h5", "keras"):
        return True
    return path.lower().endswith(_FILE_SUFFIXES)


# --- saving ---------------------------------------------------------------------------------
def _check_savable(model) -> None:
    if not model.built:
        raise ValueError(
            f"Model '{model.name}' cannot be saved because it is not built: its input shape "
            "is unknown. Call model.build(input_shape) or call the model on data first."
        )
    if type(model) is Sequential and model_config.input_shape_of(model) is None and model.weights:
        raise ValueError(
            f"Model '{model.name}' cannot be saved: its input shape was not recorded, so it "
            "could not be rebuilt. Declare it (input_shape= on the first layer, or a "
            "tf.keras.layers.InputLayer) or call the model on a batch of data first."
        )


def _checkpoint_members(root_kwargs: dict, name: str) -> dict[str, bytes]:
    """The two files of a ``Checkpoint(**root_kwargs)`` written at prefix ``name``."""
    with tempfile.TemporaryDirectory() as scratch:
        prefix = os.path.join(scratch, name)
        Checkpoint(**root_kwargs).write(prefix)
        out = {}
        for path in [prefix + ".index", *data_files(prefix)]:
            with open(path, "rb") as f:
                out[os.path.basename(path)] = f.read()
        return out


def _model_members(model) -> dict[str, bytes]:
    from simdist.version import __version__

    values: dict[str, np.ndarray] = {}
    entries = []
    for n, variable in enumerate(model.weights):
        key = f"w{n}"
        values[key] = tensors_of(variable)[VARIABLE_VALUE]
        entries.append(
            {
                "key": key,
                "name": variable.name,
                "dtype": values[key].dtype.name,
                "shape": list(values[key].shape),
            }
        )
    document = {
        "format": FORMAT_NAME,
        "format_version": saving_schema.FORMAT_VERSION,
        "simdist_version": __version__,
        "model": model_config.model_to_config(model),
        "weights": entries,
    }
    training_config = _training_config(model)
    if training_config is not None:
        document["training_config"] = training_config
    text = json.dumps(document, indent=1, default=model_config.json_default) + "\n"
    buffer = io.BytesIO()
    np.savez(buffer, **values)
    members = {CONFIG_FILE: text.encode("utf-8"), WEIGHTS_FILE: buffer.getvalue()}
    if training_config is not None:
        members.update(
            _checkpoint_members({"model": model, "optimizer": model.optimizer}, OPTIMIZER_PREFIX)
        )
    return members


def save_model(model, filepath, overwrite: bool = True, save_format=None, **kwargs) -> None:
    """Save ``model`` (architecture, weights, compile state) at ``filepath``.

    Args:
        model: a built ``tf.keras.Sequential``.
        filepath: ``*.keras`` / ``*.h5``: one file; any other path: a directory.
        overwrite: replace an existing saved model at ``filepath`` (default True).
        save_format: ``None``, ``"tf"`` (a directory), ``"keras"`` or ``"h5"`` (one file).
        **kwargs: Keras's other options (``include_optimizer``, ``signatures``...),
            accepted and ignored.

    Raises:
        NotImplementedError: a subclassed model, or a layer with a regularizer or
            constraint (which the format does not store).
        ValueError: the model is not built, or ``save_format`` is unknown.
        FileExistsError: ``filepath`` exists and ``overwrite`` is False, or it is a
            non-empty directory that is not a saved model (never deleted).
    """
    path = os.fspath(filepath).rstrip("/\\") or os.fspath(filepath)
    if save_format not in (None, "tf", "simdist", "keras", "h5"):
        raise ValueError(
            f"save_format={save_format!r} is not supported; use None (chosen by the file "
            "name), 'tf' (a directory), 'keras' or 'h5' (one simdist bundle file)."
        )
    _check_savable(model)
    as_file = _is_file_form(path, save_format)
    if os.path.lexists(path):
        if not overwrite:
            raise FileExistsError(f"'{path}' exists; pass overwrite=True to replace it.")
        foreign = os.path.isdir(path) and os.listdir(path)  # an empty directory is saved into
        if foreign and not os.path.isfile(os.path.join(path, container.MANIFEST)):
            raise FileExistsError(
                f"'{path}' exists and is not a simdist saved model (no {container.MANIFEST}); "
                "refusing to replace it. Choose another path or remove it yourself."
            )
        if os.path.isdir(path) == as_file:
            raise FileExistsError(
                f"'{path}' exists as a {'directory' if as_file else 'file'}; a save to this "
                f"name writes a {'file' if as_file else 'directory'}. Remove it first."
            )
    container.write_members(path, MODEL_KIND, _model_members(model), directory=not as_file)


def _training_config(model) -> dict | None:
    """The compile settings that are stored (None when the model is not compiled)."""
    from simdist.keras import compile_config

    return compile_config.training_config(model)


# --- loading --------------------------------------------------------------------------------
def _optimizer_defaults(class_name: str):
    from simdist.keras import optimizers

    if class_name.lower() in ("lossscaleoptimizer", "lossscaleoptimizerv3"):
        from simdist.keras.mixed_precision import LossScaleOptimizer

        return LossScaleOptimizer.config_kinds()  # it has no default: it wraps an optimizer
    try:
        return optimizers.get({"class_name": class_name, "config": {}}).get_config()
    except ValueError:
        return None


def _read_model(path: str) -> tuple[dict, dict[str, bytes]]:
    kind, members = container.read_members(path)
    where = f"'{os.path.join(path, CONFIG_FILE)}'"
    if kind != MODEL_KIND or CONFIG_FILE not in members or WEIGHTS_FILE not in members:
        raise ValueError(
            f"'{path}' holds {kind!r}, not a saved model: load weights files with "
            "model.load_weights(path)."
        )
    try:
        document = json.loads(members[CONFIG_FILE].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise errors.DataLossError(f"{where} is not valid JSON ({exc}).") from None
    saving_schema.validate_config(document, where, _optimizer_defaults)
    return document, members


def _arrays(data: bytes, where: str) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (ValueError, OSError, EOFError) as exc:
        raise errors.DataLossError(f"{where} is not a readable archive ({exc}).") from None


def load_model(filepath, custom_objects: dict | None = None, compile: bool = True, **kwargs):
    """Load a model written by ``model.save(filepath)`` (a file or a directory).

    Variables are created in the current scope: under ``strategy.scope()`` the loaded
    model's variables are that strategy's (mirrored), otherwise plain variables.

    Args:
        filepath: the saved model's file or directory.
        custom_objects: ``{"ClassName": cls}`` for layer classes outside
            ``tf.keras.layers``.
        compile: compile the loaded model as it was saved (optimizer with its state, loss
            by name) when it was saved compiled.
        **kwargs: Keras's other options (``options``, ``safe_mode``), accepted and ignored.

    Returns:
        The model, built, with the saved weights.

    Raises:
        FileNotFoundError: nothing at ``filepath`` (naming an interrupted save's old copy).
        DataLossError: any file is truncated, altered, or breaks the schema (the message
            names the file); Keras's own .keras/.h5 files are refused so too.
        ValueError: an unknown layer class (pass it in ``custom_objects``), or a weights file.
    """
    path = os.fspath(filepath)
    document, members = _read_model(path)
    where = f"'{os.path.join(path, CONFIG_FILE)}'"
    arrays = _arrays(members[WEIGHTS_FILE], f"'{os.path.join(path, WEIGHTS_FILE)}'")
    classes = {**model_config.builtin_layers(), **with_custom_objects(custom_objects)}
    entry = document["model"]
    if not isinstance(entry, dict) or not isinstance(entry.get("config"), dict):
        raise errors.DataLossError(f"{where} does not describe a model.")
    model = model_config.model_from_config(entry, classes, where)
    _assign_weights(model, document["weights"], arrays, path)
    training_config = document.get("training_config")
    if compile and isinstance(training_config, dict):
        _compile_from(model, training_config, path, members, custom_objects)
    return model


def _compile_from(
    model, training_config: dict, path: str, members: dict[str, bytes], custom_objects=None
) -> None:
    """Compile ``model`` as it was when saved and restore its optimizer's state."""
    from simdist.keras import compile_config

    if training_config.get("loss") is None:
        warnings.warn(
            f"The model in '{path}' was saved without a loss; it is loaded uncompiled. Call "
            "model.compile(...) before training.",
            stacklevel=3,
        )
        return
    try:
        args = compile_config.compile_args(training_config, custom_objects)
    except ValueError as exc:
        warnings.warn(
            f"The model in '{path}' is loaded uncompiled: {exc} Pass the custom loss or "
            "metric in load_model(..., custom_objects=...), or call model.compile(...).",
            stacklevel=3,
        )
        return
    model.compile(**args)
    _restore_members(
        Checkpoint(model=model, optimizer=args["optimizer"]), members, OPTIMIZER_PREFIX
    )


def _restore_members(checkpoint, members: dict[str, bytes], prefix_name: str):
    """Restore ``checkpoint`` from the verified checkpoint files among ``members``."""
    names = [n for n in members if n == prefix_name + ".index" or n.startswith(prefix_name + ".")]
    if prefix_name + ".index" not in names:
        raise errors.DataLossError(f"the saved files lack the checkpoint '{prefix_name}'.")
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            with open(os.path.join(scratch, name), "wb") as f:
                f.write(members[name])
        return checkpoint.restore(os.path.join(scratch, prefix_name)).expect_partial()


def _assign_weights(model, entries: list, arrays: dict, path: str) -> None:
    weights_file = os.path.join(path, WEIGHTS_FILE)
    variables = model.weights
    if len(entries) != len(variables):
        raise errors.DataLossError(
            f"Saved model '{path}' is inconsistent: config.json lists {len(entries)} weights "
            f"but the rebuilt model has {len(variables)}."
        )
    values = []
    for variable, entry in zip(variables, entries, strict=True):
        key = entry["key"]
        if key not in arrays:
            raise errors.DataLossError(
                f"Saved model '{path}' is inconsistent: weight {key!r} of config.json is not "
                f"in '{weights_file}'."
            )
        array = arrays[key]
        if tuple(array.shape) != tuple(variable.shape) or array.dtype.name != entry["dtype"]:
            raise errors.DataLossError(
                f"Saved model '{path}' is inconsistent: '{weights_file}' holds {key!r} as "
                f"{array.dtype.name}{tuple(array.shape)}, the rebuilt layer expects "
                f"{entry['dtype']}{tuple(variable.shape)}."
            )
        values.append(array.astype(variable.dtype.as_numpy_dtype, copy=False))
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)


# --- weights only ----------------------------------------------------------------------------
def _weights_prefix(path: str) -> str | None:
    """The checkpoint prefix inside ``path`` when it names a directory, else None."""
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        return os.path.join(path, WEIGHTS_PREFIX)
    return None


def save_weights(model, filepath, overwrite: bool = True, save_format=None, options=None):
    """Write ``model``'s weights (the model is the checkpoint's root, as Keras's TF format).

    ``*.h5`` (``*.weights.h5``): one bundle file; a directory: the prefix ``weights`` in it;
    any other path: a checkpoint prefix (``.index`` + data file). The checkpoint forms are
    recorded in their directory's ``checkpoint`` file (``tf.train.latest_checkpoint``).

    Raises:
        FileExistsError: weights exist at ``filepath`` and ``overwrite`` is False.
    """
    path = os.fspath(filepath)
    if _is_file_form(path, save_format) and _weights_prefix(path) is None:
        if not overwrite and os.path.lexists(path):
            raise FileExistsError(f"Weights exist at '{path}'; pass overwrite=True to replace.")
        members = _checkpoint_members({"root": model}, WEIGHTS_PREFIX)
        container.write_members(path, WEIGHTS_KIND, members, directory=False)
        return
    prefix = _weights_prefix(path) or path
    if not overwrite and checkpoint_exists(prefix):
        raise FileExistsError(f"Weights exist at '{prefix}'; pass overwrite=True to replace.")
    Checkpoint(root=model).write(prefix)
    update_checkpoint_state(os.path.dirname(prefix) or ".", prefix)


def load_weights(model, filepath, skip_mismatch: bool = False, by_name: bool = False):
    """Restore weights written by ``save_weights`` (a file, a directory or a prefix), or the
    weights of a model saved as one file (``model.save("m.keras")``).

    Returns:
        The restore status (``assert_consumed()``, ``expect_partial()``...).

    Raises:
        NotFoundError: no checkpoint at ``filepath``.
        DataLossError: its files are damaged.
        ValueError: ``filepath`` is a saved-model directory (use ``load_model``).
        NotImplementedError: ``by_name`` / ``skip_mismatch`` (HDF5-only options in Keras).
    """
    if by_name or skip_mismatch:
        raise NotImplementedError(
            "by_name and skip_mismatch apply to Keras's HDF5 files, which simdist does not "
            "write; simdist matches weights by the model's structure."
        )
    path = os.fspath(filepath)
    if os.path.isfile(path) and not path.endswith(".index"):
        kind, members = container.read_members(path)
        if kind == MODEL_KIND:
            document, members = _read_model(path)
            arrays = _arrays(members[WEIGHTS_FILE], f"'{path}' ({WEIGHTS_FILE})")
            _assign_weights(model, document["weights"], arrays, path)
            return None
        return _restore_members(Checkpoint(root=model), members, WEIGHTS_PREFIX)
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, container.MANIFEST)):
            raise ValueError(
                f"'{filepath}' is a saved model (model.save); load it with "
                "tf.keras.models.load_model(path), or pass a save_weights path to load_weights."
            )
        latest = latest_checkpoint(path)
        if latest is not None:
            path = latest
    return Checkpoint(root=model).restore(path)


def save_for_callback(model, path: str, weights_only: bool) -> bool:
    """``ModelCheckpoint``'s save when its formatted ``path`` names a file or a directory
    (``*.keras``, ``*.h5``, ``*.weights.h5``, an existing directory, a path ending in ``/``):
    ``save_weights`` or ``model.save`` there. Returns False for a plain prefix, which the
    callback writes as a ``tf.train.Checkpoint`` itself."""
    if not (_is_file_form(path) or _weights_prefix(path) is not None):
        return False
    if weights_only:
        model.save_weights(path, overwrite=True)
    else:
        model.save(path, overwrite=True)
    return True
