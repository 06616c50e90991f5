"""``tf.train.CheckpointManager``: numbered saves in one directory, keeping the newest N.

The manager writes ``<directory>/<checkpoint_name>-<n>`` through its ``Checkpoint`` (``n`` is
the checkpoint's ``save_counter`` unless ``checkpoint_number`` is given, as in TF), records
the kept checkpoints in the directory's ``checkpoint`` state file (oldest first), and
deletes the oldest beyond ``max_to_keep`` (its ``.index`` first, so a half-deleted
checkpoint is never found), and the leftovers of killed saves of this manager's numbered
checkpoints that no state file lists. ``step_counter`` with ``checkpoint_interval`` only
decides whether a ``save()`` writes: not when the step has not advanced by the interval since
the last save, and never twice at one step (even with ``check_interval=False``), as TF.
A manager created on a directory that already has checkpoints takes them over: they count
towards ``max_to_keep`` and ``latest_checkpoint`` is the newest.

``keep_checkpoint_every_n_hours`` is not supported: it makes which checkpoints survive
depend on wall time, and simdist keeps results independent of time.
"""

from __future__ import annotations

import os
import re

import numpy as np

from simdist.checkpoint import integrity
from simdist.checkpoint.format import checkpoint_exists, remove_checkpoint
from simdist.checkpoint.state import get_checkpoint_state, update_checkpoint_state

__all__ = ["CheckpointManager"]


def _as_int(value, what: str) -> int:
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.shape != () or array.dtype.kind not in "iu":
        raise ValueError(f"{what} must be an integer (or an integer variable), got {value!r}.")
    return int(array)


class CheckpointManager:
    """Saves numbered checkpoints and keeps the newest ``max_to_keep`` of them.

    Args:
        checkpoint: the ``tf.train.Checkpoint`` to save and restore.
        directory: where the checkpoints and the ``checkpoint`` state file go.
        max_to_keep: how many checkpoints to keep; None keeps all.
        keep_checkpoint_every_n_hours: must be None (see the module docstring).
        checkpoint_name: the file prefix inside ``directory``.
        step_counter: an integer variable; numbers the checkpoints and drives
            ``checkpoint_interval``.
        checkpoint_interval: save only when ``step_counter`` advanced this much since the
            last save.
        init_fn: called by ``restore_or_initialize`` when there is nothing to restore.

    Raises:
        ValueError: ``max_to_keep`` below 1, or ``checkpoint_interval`` without
            ``step_counter``.
        NotImplementedError: ``keep_checkpoint_every_n_hours`` is given.
    """

    def __init__(
        self,
        checkpoint,
        directory,
        max_to_keep,
        keep_checkpoint_every_n_hours=None,
        checkpoint_name="ckpt",
        step_counter=None,
        checkpoint_interval=None,
        init_fn=None,
    ) -> None:
        if max_to_keep is not None and (int(max_to_keep) != max_to_keep or max_to_keep < 1):
            raise ValueError(f"max_to_keep must be a positive integer or None, got {max_to_keep}.")
        if keep_checkpoint_every_n_hours is not None:
            raise NotImplementedError(
                "keep_checkpoint_every_n_hours is not supported: it makes the kept checkpoints "
                "depend on wall time. Use max_to_keep=None to keep every checkpoint."
            )
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError(
                "`step_counter` should be passed if `checkpoint_interval` is not None."
            )
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_saved_step: int | None = None
        state = get_checkpoint_state(self._directory)
        self._kept: list[str] = []
        self._latest: str | None = None
        if state is not None:
            self._kept = [p for p in state.all_model_checkpoint_paths if checkpoint_exists(p)]
            if checkpoint_exists(state.model_checkpoint_path):
                self._latest = state.model_checkpoint_path

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self) -> str | None:
        """The prefix of the newest checkpoint in ``directory``, or None."""
        return self._latest

    @property
    def checkpoints(self) -> list[str]:
        """The kept checkpoints' prefixes, oldest first."""
        return list(self._kept)

    def save(self, checkpoint_number=None, check_interval: bool = True, options=None):
        """Save a checkpoint, then delete the oldest beyond ``max_to_keep``.

        Args:
            checkpoint_number: the number in the file name; by default the checkpoint's
                ``save_counter`` (which is incremented in every case).
            check_interval: honour ``checkpoint_interval`` (False saves regardless, except
                a second time at the same step).
            options: a ``CheckpointOptions`` (ignored).

        Returns:
            The new checkpoint's prefix, or None when the interval has not passed.
        """
        if self._checkpoint_interval is not None:
            step = _as_int(self._step_counter, "step_counter")
            last = self._last_saved_step
            if last is not None and (
                step == last or (check_interval and step < last + self._checkpoint_interval)
            ):
                return None
            self._last_saved_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        if checkpoint_number is None:
            number = _as_int(counter, "save_counter")
        else:
            number = _as_int(checkpoint_number, "checkpoint_number")
        path = f"{self._prefix}-{number}"
        self._checkpoint.write(path)
        self._kept = [p for p in self._kept if os.path.abspath(p) != os.path.abspath(path)]
        self._kept.append(path)
        doomed: list[str] = []
        if self._max_to_keep is not None and len(self._kept) > self._max_to_keep:
            doomed = self._kept[: -self._max_to_keep]
            self._kept = self._kept[-self._max_to_keep :]
        self._latest = path
        update_checkpoint_state(self._directory, path, self._kept)
        for old in doomed:
            remove_checkpoint(old)
        self._remove_orphans()
        return path

    def _remove_orphans(self) -> None:
        """Delete the data and temporary files of numbered checkpoints that have no index
        (saves that were killed), and indexes' temporary files."""
        base = re.escape(os.path.basename(self._prefix))
        numbered = re.compile(base + r"-\d+")
        keep = {os.path.basename(p) for p in self._kept}
        for name in sorted(os.listdir(self._directory)):
            match = re.match(base + r"-\d+(?=\.data-|\.index\.)", name.lstrip("."))
            if match is None or match.group(0) in keep or not numbered.fullmatch(match.group(0)):
                continue
            prefix = os.path.join(self._directory, match.group(0))
            if not checkpoint_exists(prefix):
                remove_checkpoint(prefix)
        integrity.remove_stale(self._directory, [integrity.temp_pattern("checkpoint")], set())

    def restore_or_initialize(self):
        """Restore the latest checkpoint, or call ``init_fn`` when there is none.

        Returns:
            The restored checkpoint's prefix, or None when ``init_fn`` ran instead.
        """
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None
