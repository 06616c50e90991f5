"""``tf.keras.callbacks``: the hooks of ``fit`` and the Keras 2 callbacks.

``Callback``, ``CallbackList``, ``History``, ``ProgbarLogger`` live in
:mod:`simdist.keras.engine.callback_base`; ``ModelCheckpoint`` and ``BackupAndRestore`` in
:mod:`simdist.keras.callbacks_checkpoint`; ``EarlyStopping``, ``LearningRateScheduler`` and
``CSVLogger``, ``LambdaCallback``, ``TerminateOnNaN`` and ``ReduceLROnPlateau`` here;
``TensorBoard`` in :mod:`simdist.keras.callbacks_tensorboard`.
"""

from __future__ import annotations

import csv
import os
import warnings

import numpy as np

from simdist.keras import callbacks_experimental as experimental
from simdist.keras.callbacks_checkpoint import BackupAndRestore, ModelCheckpoint
from simdist.keras.callbacks_tensorboard import TensorBoard
from simdist.keras.engine.callback_base import Callback, CallbackList, History, ProgbarLogger

__all__ = [
    "Callback",
    "CallbackList",
    "History",
    "ProgbarLogger",
    "ModelCheckpoint",
    "BackupAndRestore",
    "EarlyStopping",
    "LearningRateScheduler",
    "CSVLogger",
    "LambdaCallback",
    "TerminateOnNaN",
    "ReduceLROnPlateau",
    "TensorBoard",
    "experimental",
]


def monitor_op(mode: str, monitor: str):
    """``np.less`` or ``np.greater`` for ``mode`` ('auto': greater for acc/auc names).

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode {mode!r} is unknown; use 'auto', 'min' or 'max'.")
    if mode == "max" or (mode == "auto" and ("acc" in monitor or monitor.startswith("fmeasure"))):
        return np.greater
    return np.less


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has stopped improving for ``patience`` epochs.

    An epoch improves when ``monitor`` beats the best so far by more than ``min_delta``
    (lower is better in ``min`` mode). With ``restore_best_weights`` the best epoch's
    weights are put back when training stops (or ends). ``baseline``: the value to beat
    first. ``start_from_epoch``: epochs before any counting.
    """

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ) -> None:
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.monitor_op = monitor_op(mode, monitor)
        if self.monitor_op is np.less:
            self.min_delta *= -1
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {','.join(logs or {})}",
                stacklevel=2,
            )
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self.monitor_op(current - self.min_delta, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print(
                        "Restoring model weights from the end of the best epoch: "
                        f"{self.best_epoch + 1}."
                    )
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate at each epoch's start to ``schedule(epoch, lr)``
    (or ``schedule(epoch)``); the rate is logged as ``lr``.

    Raises:
        ValueError: the optimizer has no learning-rate variable, or the schedule returns a
            non-number.
    """

    def __init__(self, schedule, verbose=0) -> None:
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def _lr_variable(self):
        lr = getattr(self.model.optimizer, "learning_rate", None)
        if lr is None or not hasattr(lr, "assign"):
            raise ValueError('Optimizer must have a "learning_rate" variable (not a schedule).')
        return lr

    def on_epoch_begin(self, epoch, logs=None):
        variable = self._lr_variable()
        current = float(np.asarray(variable.numpy()))
        try:
            lr = self.schedule(epoch, current)
        except TypeError:  # the old one-argument form
            lr = self.schedule(epoch)
        if hasattr(lr, "numpy"):
            lr = np.asarray(lr.numpy())
        if not isinstance(lr, (float, int, np.floating, np.integer, np.ndarray)):
            raise ValueError(f'The output of the "schedule" function should be float. Got: {lr!r}')
        variable.assign(float(lr))
        if self.verbose > 0:
            print(
                f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(lr)}."
            )

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = float(np.asarray(self._lr_variable().numpy()))


class CSVLogger(Callback):
    """Write each epoch's logs as a CSV row (``epoch`` then the log keys, sorted).

    ``append=True`` appends to an existing file without repeating the header.
    """

    def __init__(self, filename, separator=",", append=False) -> None:
        super().__init__()
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = append
        self.keys = None
        self._file = None
        self._writer = None

    def on_train_begin(self, logs=None):
        has_content = (
            self.append and os.path.exists(self.filename) and (os.path.getsize(self.filename) > 0)
        )
        self._append_header = not has_content
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        if self.keys is None:
            self.keys = sorted(logs)
        if self.model is not None and self.model.stop_training:
            logs = {k: logs.get(k, "NA") for k in self.keys}
        if self._writer is None:
            self._writer = csv.DictWriter(
                self._file, fieldnames=["epoch", *self.keys], delimiter=self.sep
            )
            if self._append_header:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update({k: _csv_value(logs.get(k, "NA")) for k in self.keys})
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = None
        self._writer = None


def _csv_value(value):
    if isinstance(value, (np.ndarray, list)) and np.ndim(value) > 0:
        return f'"[{", ".join(map(str, np.ravel(value)))}]"'
    return value


class LambdaCallback(Callback):
    """A callback made of functions: ``on_epoch_end=lambda epoch, logs: ...`` and so on."""

    def __init__(self, **hooks) -> None:
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise TypeError(f"Unknown callback hook {name!r}.")
            setattr(self, name, fn)


class TerminateOnNaN(Callback):
    """Stop training after the batch whose loss is NaN or infinite (prints which batch)."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        value = float(np.asarray(loss))
        if np.isnan(value) or np.isinf(value):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when ``monitor`` has not improved for
    ``patience`` epochs, then wait ``cooldown`` epochs; never below ``min_lr``.

    As Keras 2: an epoch improves when ``monitor`` beats the best by more than
    ``min_delta`` (lower for ``'min'``; higher for ``'max'``; ``'auto'``: higher for names
    containing ``acc``); every epoch's logs get ``lr`` (the rate before any reduction).

    Raises:
        ValueError: ``factor >= 1``.
        TypeError: at a reduction, an optimizer whose learning rate is a schedule.
    """

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0,
        **kwargs,
    ) -> None:
        super().__init__()
        if "epsilon" in kwargs:
            min_delta = kwargs.pop("epsilon")
            warnings.warn("`epsilon` is deprecated; use `min_delta`.", stacklevel=2)
        if kwargs:
            raise TypeError(f"Unexpected keyword argument(s): {sorted(kwargs)}.")
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Got {factor}; pass a "
                "factor below 1 (the rate is multiplied by it)."
            )
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"Learning rate reduction mode {mode} is unknown, fallback to auto mode.",
                stacklevel=2,
            )
            mode = "auto"
        self.mode = mode
        self._reset()

    def _reset(self) -> None:
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _learning_rate(self):
        from simdist.keras.optimizers.schedules import LearningRateSchedule

        lr = self.model.optimizer.learning_rate
        if isinstance(lr, LearningRateSchedule) or not hasattr(lr, "assign"):
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its "
                "`learning_rate` constructor argument, hence its learning rate is not "
                "settable. Use a float learning rate with ReduceLROnPlateau."
            )
        return lr

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        lr = self._learning_rate()
        logs["lr"] = float(np.asarray(lr.numpy()))
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is "
                f"not available. Available metrics are: {','.join(logs)}.",
                stacklevel=2,
            )
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(np.asarray(lr.numpy()))
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    lr.assign(new_lr)
                    if self.verbose > 0:
                        print(
                            f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate "
                            f"to {new_lr}."
                        )
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
