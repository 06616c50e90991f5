"""``tf.keras.callbacks.TensorBoard``: training curves and weight histograms as event files.

What is written, as Keras 2 (tf_keras 2.21) writes it, through :mod:`simdist.summary`:

* ``<log_dir>/train``: ``epoch_<name>`` for every training log of an epoch (step = the
  epoch, 0-based), plus ``epoch_learning_rate`` when the learning rate is a schedule;
  with ``update_freq='batch'`` or an integer ``n``, ``batch_<name>`` for the running logs
  of every ``n``-th batch (step = the batch count of this ``fit``, from 1);
  with ``histogram_freq=k``, ``<weight name>/histogram`` of every weight every ``k``
  epochs (step = the epoch); with ``write_steps_per_second``, ``epoch_steps_per_second``
  (and ``batch_steps_per_second`` for batch updates);
* ``<log_dir>/validation``: ``epoch_<name>`` for the ``val_*`` logs (prefix removed), and
  ``evaluation_<name>_vs_iterations`` at the end of every evaluation (step = the
  optimizer's ``iterations``).

Under a multi-worker strategy only the chief writes into ``log_dir``; the other workers
write into a temporary directory that is removed at the end of training (Keras's rule).

Not written: the graph (``write_graph``: simdist runs no TF graph to show), images of
weights (``write_images``), profiles (``profile_batch``), embeddings (``embeddings_freq > 0``
raises ``NotImplementedError``). Differs from tf_keras in one place, on purpose: batch
summaries are written whenever ``update_freq`` asks for them, also with ``verbose=0`` (where
tf_keras 2.21 skips batch hooks unless some callback needs them).
"""

from __future__ import annotations

import os
import shutil
import time
import warnings

import numpy as np

from simdist import summary
from simdist.distribute import multi_worker_util
from simdist.keras.engine.callback_base import Callback

__all__ = ["TensorBoard"]


def _scalar_logs(logs) -> dict:
    out = {}
    for name, value in (logs or {}).items():
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        if array.shape == () and array.dtype.kind in "fiub":
            out[name] = float(array)
    return out


class TensorBoard(Callback):
    """Write TensorBoard logs (see the module docstring).

    Raises:
        ValueError: an ``update_freq`` that is not ``'epoch'``, ``'batch'`` or a positive int.
        NotImplementedError: ``embeddings_freq > 0``.
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
        **kwargs,
    ) -> None:
        super().__init__()
        for key in kwargs:
            if key not in (
                "batch_size",
                "write_grads",
                "embeddings_layer_names",
                "embeddings_data",
            ):
                raise TypeError(f"Unrecognized arguments in `TensorBoard` Callback: {key!r}")
        if embeddings_freq:
            raise NotImplementedError(
                "TensorBoard(embeddings_freq > 0) is not yet in simdist; pass embeddings_freq=0."
            )
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(
                f"Unrecognized update_freq: {update_freq!r}; use 'epoch', 'batch' or a positive "
                "number of batches."
            )
        if profile_batch not in (0, None, "0", (0, 0)):
            warnings.warn(
                "TensorBoard's profile_batch is not in simdist (no profiler); nothing is "
                "profiled. Pass profile_batch=0 to silence this.",
                stacklevel=2,
            )
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = int(histogram_freq or 0)
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._writers: dict = {}
        self._train_batches = 0
        self._batch_start = None
        self._epoch_start = None
        self._epoch_start_iterations = 0

    # --- writers --------------------------------------------------------------------------
    def _write_dir(self) -> str:
        strategy = getattr(self.model, "distribute_strategy", None)
        return multi_worker_util.write_dirpath(self.log_dir, strategy)

    def _writer(self, kind: str):
        writer = self._writers.get(kind)
        if writer is None:
            writer = summary.create_file_writer(os.path.join(self._write_dir(), kind))
            self._writers[kind] = writer
        return writer

    def _scalars(self, kind: str, values: dict, step: int) -> None:
        with self._writer(kind).as_default(), summary.record_if(True):
            for name, value in values.items():
                summary.scalar(name, value, step=step)

    # --- hooks ----------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self._train_batches = 0

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
        write_dir = self._write_dir()
        if os.path.normpath(write_dir) != os.path.normpath(self.log_dir):
            shutil.rmtree(os.path.dirname(write_dir), ignore_errors=True)

    def on_train_batch_begin(self, batch, logs=None):
        if self.write_steps_per_second:
            self._batch_start = time.time()

    def on_train_batch_end(self, batch, logs=None):
        self._train_batches += 1
        if self.update_freq == "epoch" or self._train_batches % self.update_freq:
            return
        values = {f"batch_{k}": v for k, v in _scalar_logs(logs).items()}
        if self.write_steps_per_second and self._batch_start is not None:
            values["batch_steps_per_second"] = 1.0 / max(time.time() - self._batch_start, 1e-9)
        self._scalars("train", values, self._train_batches)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._epoch_start = time.time()
            self._epoch_start_iterations = self._iterations()

    def _iterations(self) -> int:
        optimizer = getattr(self.model, "optimizer", None)
        return int(np.asarray(optimizer.iterations.numpy())) if optimizer is not None else 0

    def on_epoch_end(self, epoch, logs=None):
        scalars = _scalar_logs(logs)
        train = {k: v for k, v in scalars.items() if not k.startswith("val_")}
        validation = {k[4:]: v for k, v in scalars.items() if k.startswith("val_")}
        learning_rate = self._scheduled_learning_rate()
        if learning_rate is not None:
            train["learning_rate"] = learning_rate
        if self.write_steps_per_second and self._epoch_start is not None:
            elapsed = max(time.time() - self._epoch_start, 1e-9)
            train["steps_per_second"] = (
                self._iterations() - self._epoch_start_iterations
            ) / elapsed
        if train:
            self._scalars("train", {f"epoch_{k}": v for k, v in train.items()}, epoch)
        if validation:
            self._scalars("validation", {f"epoch_{k}": v for k, v in validation.items()}, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def on_test_end(self, logs=None):
        if getattr(self.model, "optimizer", None) is None:
            return
        values = {f"evaluation_{k}_vs_iterations": v for k, v in _scalar_logs(logs).items()}
        self._scalars("validation", values, self._iterations())

    def _scheduled_learning_rate(self):
        from simdist.keras.optimizers.schedules import LearningRateSchedule

        optimizer = getattr(self.model, "optimizer", None)
        schedule = getattr(optimizer, "_learning_rate", None)
        if isinstance(schedule, LearningRateSchedule):
            return float(np.asarray(schedule(optimizer.iterations).numpy()))
        return None

    def _log_weights(self, epoch: int) -> None:
        writer = self._writer("train")
        with writer.as_default(), summary.record_if(True):
            for layer in self.model.layers:
                for weight in layer.weights:
                    name = weight.name.replace(":", "_")
                    summary.histogram(f"{name}/histogram", weight, step=epoch)
        writer.flush()
