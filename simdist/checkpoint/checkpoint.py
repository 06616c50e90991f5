"""``tf.train.Checkpoint``: save and restore an object graph of models, optimizers, variables.

>>> import os, tempfile
>>> import simdist as tf
>>> v = tf.Variable(1.0)
>>> ckpt = tf.train.Checkpoint(v=v)
>>> directory = tempfile.mkdtemp()
>>> path = ckpt.save(os.path.join(directory, "ckpt"))
>>> os.path.basename(path)
'ckpt-1'
>>> _ = v.assign(5.0)
>>> status = ckpt.restore(tf.train.latest_checkpoint(directory))
>>> float(v.numpy())
1.0

Everything is saved through the trackable protocol (``simdist.core.trackable``): a variable
saves ``VARIABLE_VALUE`` (a distributed variable one value: the primary copy, or the
aggregate of an ON_READ variable; restoring assigns it outside any replica context, which
writes every copy), so a checkpoint written under a strategy restores without one and the
other way round; a dataset iterator saves ``ITERATOR_STATE`` (its input position). Lists and
dicts assigned to a ``Checkpoint`` become tracked containers (``ListWrapper``,
``DictWrapper``): a variable appended after ``restore()`` takes its saved value then, as in
TF.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from simdist.checkpoint.format import exclusive_prefix, read_index, read_values, write_files
from simdist.checkpoint.graph import value_key, walk
from simdist.checkpoint.restore import CheckpointLoadStatus, InitializationOnlyStatus, Restoration
from simdist.checkpoint.state import update_checkpoint_state
from simdist.core import dtypes, trackable
from simdist.core.trackable import children_of, is_trackable, tensors_of
from simdist.core.trackable_data_structures import wrap
from simdist.core.variables import Variable, VariableAggregation
from simdist.distribute.multi_worker_util import check_distinct_paths

__all__ = ["Checkpoint", "CheckpointOptions"]


class CheckpointOptions:
    """``tf.train.CheckpointOptions``: accepted for compatibility; simdist needs none."""

    def __init__(
        self,
        experimental_io_device=None,
        experimental_enable_async_checkpoint=False,
        experimental_write_callbacks=None,
        enable_async=False,
    ) -> None:
        self.experimental_io_device = experimental_io_device
        self.enable_async = bool(enable_async or experimental_enable_async_checkpoint)


def serialize(root) -> tuple[dict[str, np.ndarray], list[dict]]:
    """The values and the object-graph node list of everything under ``root``."""
    graph = walk(root)
    values: dict[str, np.ndarray] = {}
    nodes: list[dict] = []
    for node, obj in enumerate(graph.objects):
        entry: dict = {}
        if graph.children[node]:
            entry["children"] = dict(graph.children[node])
        tensors = tensors_of(obj)
        if tensors:
            entry["tensors"] = {}
            for name, array in tensors.items():
                key = value_key(graph.paths[node], name)
                entry["tensors"][name] = key
                values[key] = np.asarray(array)
        if graph.slots.get(node):
            entry["slots"] = [
                {"variable": var, "name": name, "node": slot}
                for var, name, slot in graph.slots[node]
            ]
        nodes.append(entry)
    return values, nodes


class Checkpoint(trackable.Trackable):
    """Groups trackable objects for saving and restoring (``tf.train.Checkpoint``).

    Args:
        root: an optional object whose children become this checkpoint's children.
        **kwargs: the objects to track, by name (models, layers, optimizers, variables,
            other checkpoints, or lists/dicts of them). Assigning an attribute later tracks
            it too.

    Raises:
        ValueError: a value that is not trackable (a number, a tensor, a string...).
    """

    def __init__(self, root=None, **kwargs) -> None:
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_counter_lock", threading.Lock())
        if root is not None and not is_trackable(root):
            raise ValueError(self._not_trackable("root", root))
        object.__setattr__(self, "_root", root)
        for name, value in sorted(kwargs.items()):
            setattr(self, name, value)

    @staticmethod
    def _not_trackable(name: str, value) -> str:
        return (
            f"`Checkpoint` was given {name}={value!r} of type {type(value).__name__}, which it "
            "cannot track. Pass variables, Keras models/layers, optimizers, dataset "
            "iterators, other Checkpoints or objects with a `_trackable_children()` method "
            "(wrap a plain value in tf.Variable to save it)."
        )

    def __setattr__(self, name: str, value) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        if name == "save_counter":
            raise AttributeError("`save_counter` is managed by the Checkpoint; it cannot be set.")
        if not is_trackable(value):
            raise ValueError(self._not_trackable(name, value))
        value = wrap(value)  # a list or dict that reports appends (restore-on-append)
        self._children[name] = value
        object.__setattr__(self, name, value)
        trackable.children_changed(self)  # a pending restore may be waiting for it

    def _trackable_children(self) -> dict:
        out = dict(children_of(self._root)) if self._root is not None else {}
        out.update(self._children)
        if self._save_counter is not None:
            out["save_counter"] = self._save_counter
        return out

    # --- the save counter -----------------------------------------------------------------
    def _create_save_counter(self) -> Variable:
        if self._save_counter is None:
            counter = Variable(
                0,
                name="save_counter",
                dtype=dtypes.int64,
                trainable=False,
                aggregation=VariableAggregation.ONLY_FIRST_REPLICA,
            )
            object.__setattr__(self, "_save_counter", counter)
        return self._save_counter

    @property
    def save_counter(self) -> Variable:
        """How many times ``save()`` has run (an int64 variable, created on first use)."""
        return self._create_save_counter()

    # --- saving ---------------------------------------------------------------------------
    def write(self, file_prefix, options=None) -> str:
        """Write a checkpoint at exactly ``file_prefix`` (no counter, no state-file update).

        Args:
            file_prefix: the path prefix; ``<prefix>.index`` and ``<prefix>.npz`` are
                written, and missing directories are created.
            options: a ``CheckpointOptions`` (ignored).

        Returns:
            ``file_prefix``.

        Raises:
            FailedPreconditionError: another save to this prefix is running in this process.
            ValueError: under a multi-worker strategy, another worker writes the same prefix.
        """
        prefix = os.fspath(file_prefix)
        check_distinct_paths(prefix)  # under a multi-worker strategy: one writer per path
        writer = f"a tf.train.Checkpoint in thread {threading.current_thread().name!r}"
        with exclusive_prefix(prefix, writer):
            values, nodes = serialize(self)
            write_files(prefix, values, nodes)
        return prefix

    def save(self, file_prefix, options=None) -> str:
        """Save a numbered checkpoint ``<file_prefix>-<n>`` and record it as the latest.

        ``n`` is ``save_counter`` after it is incremented (1 for the first save). The
        directory's ``checkpoint`` file is updated, so ``tf.train.latest_checkpoint`` finds it.

        Args:
            file_prefix: e.g. ``"./training_checkpoints/ckpt"``.
            options: a ``CheckpointOptions`` (ignored).

        Returns:
            The checkpoint's path prefix, to pass to ``restore``.

        Raises:
            FailedPreconditionError: another save to the same path is running in this process.
        """
        prefix = os.fspath(file_prefix)
        with self._counter_lock:
            counter = self.save_counter
            counter.assign_add(1)
            number = int(np.asarray(counter.numpy()))
        path = f"{prefix}-{number}"
        try:
            self.write(path)
        except BaseException:
            with self._counter_lock:
                counter.assign_sub(1)
            raise
        update_checkpoint_state(os.path.dirname(prefix), path)
        return path

    # --- restoring ------------------------------------------------------------------------
    def restore(self, save_path, options=None):
        """Restore the values saved at ``save_path`` into the tracked objects.

        Objects are matched by their names in the object graph. Variables that do not
        exist yet (layers not built, optimizer slots not created) get their values when
        they are created. ``restore(None)`` does nothing (``latest_checkpoint`` of an empty
        directory is None).

        Args:
            save_path: a prefix returned by ``save``/``write`` or ``latest_checkpoint``.
            options: a ``CheckpointOptions`` (ignored).

        Returns:
            A status with ``assert_consumed()``, ``assert_existing_objects_matched()``,
            ``assert_nontrivial_match()`` and ``expect_partial()``.

        Raises:
            NotFoundError: no checkpoint at ``save_path``.
            DataLossError: the checkpoint's files are damaged.
            ValueError: a saved value's shape or dtype differs from its variable's.
        """
        if save_path is None:
            return InitializationOnlyStatus()
        prefix = os.fspath(save_path)
        index = read_index(prefix)
        values = read_values(prefix, index)
        if "save_counter" in index["object_graph"][0].get("children", {}):
            self._create_save_counter()
        restoration = Restoration(self, prefix, index, values)
        restoration.run()
        return CheckpointLoadStatus(restoration)

    def read(self, save_path, options=None):
        """Restore a checkpoint written by ``write`` (the same as ``restore``).

        Raises:
            NotFoundError, DataLossError, ValueError: as ``restore``.
        """
        if save_path is None:
            raise ValueError("Checkpoint.read needs a save_path; got None.")
        return self.restore(save_path, options)
