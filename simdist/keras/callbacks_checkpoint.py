"""``ModelCheckpoint`` and ``BackupAndRestore``: callbacks that save training as it goes.

``ModelCheckpoint(filepath)`` formats ``filepath`` with ``epoch`` (1-based), ``batch``
(1-based, for ``save_freq=n``) and the logs, e.g. ``"ckpt/weights.{epoch:02d}-{val_loss:.2f}"``,
then saves, by the formatted name:

* with ``save_weights_only``, always ``model.save_weights(path)``, as Keras does: a Keras
  file name (``*.weights.h5`` / ``*.h5``) is one file per save, a directory (or a name
  ending with ``/``) is saved into, and a checkpoint prefix becomes ``<path>.index`` + its
  data file, recorded in the directory's ``checkpoint`` file (so
  ``model.load_weights(tf.train.latest_checkpoint(dir))`` restores the last one);
* otherwise a Keras file name or a directory gets ``model.save(path)``; a checkpoint prefix
  gets a ``tf.train.Checkpoint`` of the model and its optimizer; restore it with
  ``tf.train.Checkpoint(model=model, optimizer=optimizer).restore(path)``.

``save_freq='epoch'`` saves at each epoch's end (every ``period`` epochs), ``save_freq=n``
after every ``n`` training batches, counted across epochs as Keras counts them.

``BackupAndRestore(backup_dir)`` makes ``fit`` resumable. It keeps, in ``backup_dir/chief``:

* ``ckpt-N.index``/``ckpt-N.npz``: the model and optimizer (weights, slots, ``iterations``),
  the two newest kept (``tf.train.CheckpointManager``);
* ``training_state.json`` (self-checksummed JSON, ``simdist.checkpoint.integrity``), replaced
  atomically after the checkpoint is complete: the
  checkpoint it belongs to, the position ``epoch``/``step`` (the next step to run), the
  running loss sum/count of the interrupted epoch, each metric variable's per-replica
  values, the shuffle seed, and the random counters of the host and of every replica (so
  Dropout masks after a restart continue the interrupted run's sequence).

When ``fit`` starts and a backup exists, the model and optimizer are restored and ``fit``
continues at that epoch and step: the epoch's batches are regenerated (NumPy input: the
same permutation, see :mod:`simdist.keras.engine.data_adapter`) and the first ``step`` are
skipped, so the resumed run applies exactly the updates the uninterrupted one would have.
Exact for inputs whose batch order depends on nothing but the epoch (NumPy arrays,
datasets without an unseeded or per-iteration reshuffle), Dropout included, when the
restarted program sets the same ``tf.random.set_seed``. The backup is deleted when ``fit``
ends normally (``delete_checkpoint=True``).
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np

from simdist.checkpoint import integrity
from simdist.checkpoint.checkpoint import Checkpoint
from simdist.checkpoint.manager import CheckpointManager
from simdist.distribute import multi_worker_util
from simdist.keras.engine.callback_base import Callback

__all__ = ["ModelCheckpoint", "BackupAndRestore"]


def _check_freq(save_freq):
    if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
        raise ValueError(
            f"Unrecognized save_freq: {save_freq!r}. Expected save_freq are 'epoch' or a "
            "positive integer number of batches."
        )
    return save_freq


def _is_keras_target(path: str) -> bool:
    """A name that Keras saves with ``model.save``/``save_weights``: its file suffixes, or a
    directory."""
    lowered = path.lower()
    return (
        lowered.endswith((".h5", ".keras", ".hdf5"))
        or path.endswith(("/", os.sep))
        or os.path.isdir(path)
    )


class ModelCheckpoint(Callback):
    """Save the model (or its weights) every epoch, every ``save_freq`` batches, or only
    when ``monitor`` improves (``save_best_only``).

    Raises:
        ValueError: an unknown ``mode`` or ``save_freq``.
    """

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        options=None,
        initial_value_threshold=None,
        **kwargs,
    ) -> None:
        from simdist.keras.callbacks import monitor_op

        super().__init__()
        self.period = int(kwargs.pop("period", 1))
        if kwargs:
            raise TypeError(
                f"Unexpected keyword argument(s) for ModelCheckpoint: {sorted(kwargs)}."
            )
        self.options = options
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = _check_freq(save_freq)
        self.monitor_op = monitor_op(mode, monitor)
        if initial_value_threshold is not None:
            self.best = initial_value_threshold
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        self._batches = 0
        self._last_batch_seen = -1
        self._epoch = 0
        self._epochs_since_last_save = 0

    def _checkpoint(self) -> Checkpoint:
        if self.save_weights_only or self.model.optimizer is None:
            return Checkpoint(model=self.model)
        return Checkpoint(model=self.model, optimizer=self.model.optimizer)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        # Keras's count: a batch index not above the last one seen starts a new epoch.
        added = batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._last_batch_seen = batch
        self._batches += added
        if self._batches >= self.save_freq:
            self._batches = 0
            self._save(self._epoch, dict(logs or {}, batch=batch + 1))

    def on_epoch_end(self, epoch, logs=None):
        self._epochs_since_last_save += 1
        if self.save_freq == "epoch" and self._epochs_since_last_save >= self.period:
            self._epochs_since_last_save = 0
            self._save(epoch, logs or {})

    def _save(self, epoch: int, logs: dict) -> None:
        try:
            path = self.filepath.format(epoch=epoch + 1, **logs)
        except KeyError as err:
            raise KeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: {err}'
            ) from err
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                import warnings

                warnings.warn(
                    f"Can save best model only with {self.monitor} available, skipping.",
                    stacklevel=3,
                )
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(
                        f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}"
                    )
                return
            if self.verbose > 0:
                print(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to "
                    f"{current:.5f}, saving model to {path}"
                )
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {path}")
        strategy = self.model.distribute_strategy
        path = multi_worker_util.write_filepath(path, strategy)  # non-chief: a temp copy
        directory = os.path.dirname(path.rstrip("/" + os.sep))
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            # as Keras: a prefix becomes a checkpoint recorded in the directory's
            # 'checkpoint' file, so tf.train.latest_checkpoint(dir) finds it
            self.model.save_weights(path, overwrite=True)
        elif _is_keras_target(path):
            self.model.save(path, overwrite=True)
        else:
            self._checkpoint().write(path)
        multi_worker_util.remove_temp_dir(path, strategy)


class BackupAndRestore(Callback):
    """Back up training state so an interrupted ``fit`` resumes where it stopped (see the
    module docstring for the files and the exactness conditions).

    Raises:
        ValueError: an empty ``backup_dir`` or a bad ``save_freq``.
    """

    _STATE = "training_state.json"

    def __init__(
        self, backup_dir, save_freq="epoch", delete_checkpoint=True, save_before_preemption=False
    ) -> None:
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = _check_freq(save_freq)
        self.delete_checkpoint = delete_checkpoint
        self._dir = os.path.join(self.backup_dir, "chief")
        self._manager = None
        self._batches = 0

    def _state_path(self) -> str:
        return os.path.join(self._dir, self._STATE)

    def on_train_begin(self, logs=None):
        model = self.model
        checkpoint = Checkpoint(model=model, optimizer=model.optimizer)
        # Every worker reads the chief's backup; non-chief workers write their own copy.
        self._write_dir = multi_worker_util.write_dirpath(self._dir, model.distribute_strategy)
        self._manager = CheckpointManager(checkpoint, self._write_dir, max_to_keep=2)
        self._batches = 0
        if not os.path.exists(self._state_path()):
            return
        with open(self._state_path(), "rb") as f:  # checksummed: damage is DataLossError
            saved = integrity.read_checked_document(f.read(), self._state_path())
        checkpoint.restore(os.path.join(self._dir, saved["checkpoint"]))
        data = getattr(model, "_fit_data", None)
        if data is not None and data.seed != saved["seed"]:
            raise ValueError(
                f"The backup in {self._dir} was made with shuffle seed {saved['seed']} but this "
                f"run uses {data.seed}; set the same tf.random.set_seed to resume exactly, or "
                "delete the backup directory."
            )
        if "random" in saved:  # dropout and other random ops continue their sequences
            model.distribute_strategy._restore_random_state(saved["random"])
        object.__setattr__(model, "_resume_point", saved)

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches += 1
        if self._batches % self.save_freq == 0:
            self._backup(*self.model._fit_position)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._backup(epoch + 1, 0)

    def _backup(self, epoch: int, step: int) -> None:
        from simdist.keras.engine.compile_utils import metric_states as _metric_states

        model = self.model
        path = self._manager.save()
        in_epoch = step > 0
        state = {
            "checkpoint": os.path.basename(path),
            "epoch": int(epoch),
            "step": int(step),
            "loss_tracker": list(model._loss_tracker) if in_epoch else [0.0, 0.0],
            "metric_states": _metric_states(model) if in_epoch else None,
            "seed": model._fit_data.seed,
            "random": model.distribute_strategy._random_state(),
        }
        target = os.path.join(self._write_dir, self._STATE)
        integrity.atomic_write_bytes(target, integrity.checked_document(json.dumps(state)))

    def on_train_end(self, logs=None):
        if self._write_dir != self._dir:  # a non-chief worker's copy: never read back
            shutil.rmtree(os.path.dirname(self._write_dir), ignore_errors=True)
        elif self.delete_checkpoint and os.path.isdir(self._dir):
            shutil.rmtree(self._dir)
