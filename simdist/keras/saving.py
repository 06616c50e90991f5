"""``model.save`` and ``tf.keras.models.load_model``: simdist's saved-model directory format.

A saved model is a directory (no pickle anywhere; plain JSON and a NumPy archive)::

    path/
      config.json     the architecture (UTF-8 JSON, below)
      weights.index   the weights' checkpoint index (simdist.checkpoint.format: sizes,
      weights.npz       dtypes, SHA-256 of the archive), and the arrays, read back with
                        allow_pickle=False

``config.json``::

    {"format": "simdist-keras-model", "format_version": 1, "simdist_version": "0.1.0",
     "model": {"class_name": "Sequential",
               "config": {"name": "sequential", "trainable": true,
                          "input_layer": {"class_name": "InputLayer", "config": {...}} | null,
                          "build_input_shape": [null, 28, 28, 1] | null,
                          "layers": [{"class_name": "Conv2D", "config": {...}}, ...]}},
     "weights": [{"key": "conv2d/kernel:0", "name": "conv2d/kernel:0",
                  "dtype": "float32", "shape": [3, 3, 1, 32]}, ...]}

A compiled model also gets ``"training_config"`` (optimizer, loss and metrics, names or
class + config: see :mod:`simdist.keras.compile_config`) in ``config.json`` and
``optimizer.index`` + ``optimizer.npz``: a ``tf.train.Checkpoint(model=..., optimizer=...)``
holding the optimizer's state (iterations, slots; it repeats the weights).
``load_model(compile=True)`` compiles the loaded model with them, so training resumes where
it stopped.

Each layer's ``config`` is its ``get_config()``; ``from_config`` rebuilds it (classes outside
``tf.keras.layers`` come from ``load_model(..., custom_objects={"Name": cls})``). ``weights``
lists ``model.weights`` in order; ``key`` names the array in ``weights.npz``.

Atomicity: a save writes a complete new directory next to ``path`` (``.NAME.saving-*``),
then swaps it in with two renames (old -> ``.NAME.old-*``, new -> ``path``) and deletes the
old one. A save that fails before the swap leaves the previous model untouched; a crash
between the two renames leaves the previous model at ``.NAME.old-*``, which ``load_model``
names in its error. Damaged files raise ``DataLossError`` naming the file.

Only ``Sequential`` models are saved this way (their architecture is data). A subclassed
model's architecture is Python code: save its weights with ``save_weights`` or
``tf.train.Checkpoint`` and rebuild it from its class.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
import warnings

import numpy as np

from simdist import errors
from simdist.checkpoint.format import atomic_write_bytes, read_index, read_values, write_files
from simdist.keras import model_config
from simdist.keras.engine.sequential import Sequential

__all__ = ["save_model", "load_model", "save_weights", "load_weights", "FORMAT_NAME"]

FORMAT_NAME = "simdist-keras-model"
FORMAT_VERSION = 1
CONFIG_FILE = "config.json"
WEIGHTS_PREFIX = "weights"
OPTIMIZER_PREFIX = "optimizer"
_UNSUPPORTED_SUFFIXES = (".h5", ".hdf5")


# --- saving ---------------------------------------------------------------------------------
def _check_savable(model, path: str) -> None:
    if path.lower().endswith(_UNSUPPORTED_SUFFIXES):
        raise NotImplementedError(
            f"Cannot save to '{path}': simdist does not write HDF5. Pass a path without the "
            "suffix; simdist writes a directory (config.json + weights.npz)."
        )
    if type(model) is not Sequential:
        raise NotImplementedError(
            f"Cannot save model '{model.name}' of class {type(model).__name__} with "
            "model.save(): its architecture is Python code, which simdist does not "
            "serialize. Save its weights with model.save_weights(path) (or "
            "tf.train.Checkpoint(model=model).save(prefix)) and rebuild the model from its "
            "class before load_weights / restore."
        )
    if not model.built:
        raise ValueError(
            f"Model '{model.name}' cannot be saved because it is not built: its input shape "
            "is unknown. Call model.build(input_shape) or call the model on data first."
        )
    if model_config.input_shape_of(model) is None and model.weights:
        raise ValueError(
            f"Model '{model.name}' cannot be saved: its input shape was not recorded, so it "
            "could not be rebuilt. Declare it (input_shape= on the first layer, or a "
            "tf.keras.layers.InputLayer) or call the model on a batch of data first."
        )


def save_model(model, filepath, overwrite: bool = True, save_format=None, **kwargs) -> None:
    """Save ``model`` (architecture and weights) as a directory at ``filepath``.

    Args:
        model: a built ``tf.keras.Sequential``.
        filepath: the directory to write (created; its parent is created when missing).
        overwrite: replace an existing saved model at ``filepath`` (default True).
        save_format: ``None`` or ``"tf"`` (both mean simdist's directory format).
        **kwargs: Keras's other options (``include_optimizer``, ``signatures``...),
            accepted and ignored.

    Raises:
        NotImplementedError: a subclassed model, an HDF5 path, or a layer with a
            regularizer or constraint (which the format does not store).
        ValueError: the model is not built, or ``save_format`` is another format.
        FileExistsError: ``filepath`` exists and ``overwrite`` is False, or it is a file or
            a directory that is not a saved model (never deleted).
    """
    path = os.fspath(filepath).rstrip("/\\") or os.fspath(filepath)
    if save_format not in (None, "tf", "simdist"):
        raise ValueError(
            f"save_format={save_format!r} is not supported; simdist writes one format (a "
            "directory with config.json and weights.npz): pass save_format=None."
        )
    _check_savable(model, path)
    if os.path.lexists(path):
        if not overwrite:
            raise FileExistsError(f"'{path}' exists; pass overwrite=True to replace it.")
        if not os.path.isfile(os.path.join(path, CONFIG_FILE)):
            raise FileExistsError(
                f"'{path}' exists and is not a simdist saved model (no {CONFIG_FILE}); "
                "refusing to replace it. Choose another path or remove it yourself."
            )
    weights = model.weights
    from simdist.checkpoint.checkpoint import saved_value

    values: dict[str, np.ndarray] = {}
    entries = []
    for variable in weights:
        key = variable.name if variable.name not in values else f"{variable.name}#{len(values)}"
        values[key] = saved_value(variable)
        entries.append(
            {
                "key": key,
                "name": variable.name,
                "dtype": values[key].dtype.name,
                "shape": list(values[key].shape),
            }
        )
    from simdist.version import __version__

    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "simdist_version": __version__,
        "model": {"class_name": "Sequential", "config": model_config.sequential_config(model)},
        "weights": entries,
    }
    training_config = _training_config(model)
    if training_config is not None:
        document["training_config"] = training_config
    text = json.dumps(document, indent=1, default=model_config.json_default) + "\n"
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    base = os.path.basename(os.path.abspath(path))
    staging = tempfile.mkdtemp(dir=parent, prefix=f".{base}.saving-")
    try:
        write_files(os.path.join(staging, WEIGHTS_PREFIX), values, [{}])
        if training_config is not None:
            from simdist.checkpoint.checkpoint import Checkpoint

            Checkpoint(model=model, optimizer=model.optimizer).write(
                os.path.join(staging, OPTIMIZER_PREFIX)
            )
        atomic_write_bytes(os.path.join(staging, CONFIG_FILE), text.encode("utf-8"))
        _swap_in(staging, path, parent, base)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _training_config(model) -> dict | None:
    """The compile settings that are stored (None when the model is not compiled)."""
    from simdist.keras import compile_config

    return compile_config.training_config(model)


def _swap_in(staging: str, path: str, parent: str, base: str) -> None:
    """Replace ``path`` by the complete directory ``staging`` (two renames)."""
    old = None
    if os.path.lexists(path):
        old = tempfile.mkdtemp(dir=parent, prefix=f".{base}.old-")
        os.rmdir(old)
        os.rename(path, old)
    try:
        os.rename(staging, path)
    except BaseException:
        if old is not None:
            os.rename(old, path)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    if os.name == "posix":
        fd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- loading --------------------------------------------------------------------------------
def _missing(path: str) -> FileNotFoundError:
    parent = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(os.path.abspath(path))
    leftovers = sorted(glob.glob(os.path.join(glob.escape(parent), f".{glob.escape(base)}.old-*")))
    hint = ""
    if leftovers:
        hint = (
            f" A save to it was interrupted; the previous model is in '{leftovers[-1]}': "
            f"rename that directory to '{path}' to recover it."
        )
    return FileNotFoundError(f"No file or directory found at {path}.{hint}")


def _read_config(path: str) -> dict:
    config_path = os.path.join(path, CONFIG_FILE)
    try:
        with open(config_path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"'{path}' is not a simdist saved model: '{config_path}' is missing. A weights "
            "checkpoint (save_weights) is loaded with model.load_weights(prefix)."
        ) from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise errors.DataLossError(
            f"Saved model '{path}' is corrupted: '{config_path}' is not valid JSON ({exc}). "
            "The file was truncated or altered; save the model again or use a backup."
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise errors.DataLossError(
            f"Saved model '{path}' is corrupted: '{config_path}' is not a {FORMAT_NAME} file."
        )
    version = document.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise errors.UnimplementedError(
            f"Saved model '{path}' has format version {version!r}; this simdist reads "
            f"version {FORMAT_VERSION} and older. Upgrade simdist to load it."
        )
    if not isinstance(document.get("model"), dict) or not isinstance(document.get("weights"), list):
        raise errors.DataLossError(
            f"Saved model '{path}' is corrupted: '{config_path}' lacks 'model' or 'weights'."
        )
    return document


def load_model(filepath, custom_objects: dict | None = None, compile: bool = True, **kwargs):
    """Load a model written by ``model.save(filepath)``.

    Variables are created in the current scope: under ``strategy.scope()`` the loaded
    model's variables are that strategy's (mirrored), otherwise plain variables.

    Args:
        filepath: the saved model's directory.
        custom_objects: ``{"ClassName": cls}`` for layer classes outside
            ``tf.keras.layers``.
        compile: compile the loaded model as it was saved (optimizer with its state, loss
            by name) when it was saved compiled.
        **kwargs: Keras's other options (``options``, ``safe_mode``), accepted and ignored.

    Returns:
        The model, built, with the saved weights.

    Raises:
        FileNotFoundError: no directory (or no ``config.json``) at ``filepath``.
        NotFoundError: the weights files are missing.
        DataLossError: a file is truncated, corrupted, or disagrees with the others (the
            message names the file).
        ValueError: an unknown layer class (pass it in ``custom_objects``).
    """
    path = os.fspath(filepath)
    if not os.path.isdir(path):
        raise _missing(path)
    document = _read_config(path)
    prefix = os.path.join(path, WEIGHTS_PREFIX)
    arrays = read_values(prefix, read_index(prefix))
    classes = {**model_config.builtin_layers(), **(custom_objects or {})}
    where = f"'{os.path.join(path, CONFIG_FILE)}'"
    entry = document["model"]
    if entry.get("class_name") != "Sequential" or not isinstance(entry.get("config"), dict):
        raise errors.DataLossError(f"{where} does not describe a Sequential model.")
    model = model_config.sequential_from_config(entry["config"], classes, where)
    _assign_weights(model, document["weights"], arrays, path)
    training_config = document.get("training_config")
    if compile and isinstance(training_config, dict):
        _compile_from(model, training_config, path, custom_objects)
    return model


def _compile_from(model, training_config: dict, path: str, custom_objects=None) -> None:
    """Compile ``model`` as it was when saved and restore its optimizer's state."""
    from simdist.checkpoint.checkpoint import Checkpoint
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
    prefix = os.path.join(path, OPTIMIZER_PREFIX)
    Checkpoint(model=model, optimizer=args["optimizer"]).restore(prefix).expect_partial()


def _assign_weights(model, entries: list, arrays: dict, path: str) -> None:
    weights_file = os.path.join(path, WEIGHTS_PREFIX + ".npz")
    variables = model.weights
    if len(entries) != len(variables):
        raise errors.DataLossError(
            f"Saved model '{path}' is inconsistent: config.json lists {len(entries)} weights "
            f"but the rebuilt model has {len(variables)}."
        )
    values = []
    for variable, entry in zip(variables, entries, strict=True):
        key = entry.get("key") if isinstance(entry, dict) else None
        if key not in arrays:
            raise errors.DataLossError(
                f"Saved model '{path}' is inconsistent: weight {key!r} of config.json is not "
                f"in '{weights_file}'."
            )
        array = arrays[key]
        if tuple(array.shape) != tuple(variable.shape):
            raise errors.DataLossError(
                f"Saved model '{path}' is inconsistent: '{weights_file}' holds {key!r} with "
                f"shape {tuple(array.shape)}, the rebuilt layer expects {tuple(variable.shape)}."
            )
        values.append(array.astype(variable.dtype.as_numpy_dtype, copy=False))
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)


# --- weights only (tf.train.Checkpoint format) ----------------------------------------------
def save_weights(model, filepath, overwrite: bool = True, save_format=None, options=None):
    """Write ``model``'s weights as a checkpoint at prefix ``filepath`` (``.index``+``.npz``).

    The model is the checkpoint's root, as Keras's TF-format ``save_weights`` does; the
    directory's ``checkpoint`` file records it, so ``tf.train.latest_checkpoint`` finds it.

    Raises:
        NotImplementedError: an HDF5 path.
        FileExistsError: a checkpoint exists at ``filepath`` and ``overwrite`` is False.
    """
    from simdist.checkpoint.checkpoint import Checkpoint
    from simdist.checkpoint.format import checkpoint_exists
    from simdist.checkpoint.state import update_checkpoint_state

    prefix = os.fspath(filepath)
    if prefix.lower().endswith(_UNSUPPORTED_SUFFIXES) or save_format == "h5":
        raise NotImplementedError(
            f"Cannot save weights to '{prefix}': simdist does not write HDF5; pass a prefix "
            "without the suffix (a tf.train.Checkpoint is written)."
        )
    if not overwrite and checkpoint_exists(prefix):
        raise FileExistsError(f"Weights exist at '{prefix}'; pass overwrite=True to replace.")
    Checkpoint(root=model).write(prefix)
    update_checkpoint_state(os.path.dirname(prefix) or ".", prefix)


def load_weights(model, filepath, skip_mismatch: bool = False, by_name: bool = False):
    """Restore weights written by ``save_weights`` (or a ``Checkpoint`` rooted at a model).

    Returns:
        The restore status (``assert_consumed()``, ``expect_partial()``...).

    Raises:
        NotFoundError: no checkpoint at ``filepath``.
        DataLossError: its files are damaged.
        NotImplementedError: ``by_name`` / ``skip_mismatch`` (HDF5-only options in Keras).
    """
    from simdist.checkpoint.checkpoint import Checkpoint

    if by_name or skip_mismatch:
        raise NotImplementedError("by_name and skip_mismatch apply to HDF5 files only.")
    prefix = os.fspath(filepath)
    if os.path.isdir(prefix) and os.path.isfile(os.path.join(prefix, CONFIG_FILE)):
        raise ValueError(
            f"'{filepath}' is a saved model (model.save); load it with "
            "tf.keras.models.load_model(path), or pass a save_weights prefix to load_weights."
        )
    return Checkpoint(root=model).restore(prefix)
