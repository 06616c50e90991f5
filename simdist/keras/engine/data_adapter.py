"""What ``fit``/``evaluate``/``predict`` iterate: NumPy arrays or Datasets, epoch by epoch.

* NumPy arrays (or tensors, or lists/dicts of them) ``x, y, sample_weight`` are sliced into
  batches of ``batch_size`` (32 by default). With ``shuffle=True`` each epoch uses the
  permutation ``np.random.default_rng([seed, epoch]).permutation(n)``, ``seed`` being the
  global seed (``tf.random.set_seed``) or 0: an epoch's batches depend on nothing but the
  seed and the epoch number, so a resumed run (``BackupAndRestore``) sees the same batches.
* A ``tf.data.Dataset`` is used as given (``y`` must then be None); its elements are ``x``,
  ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``.

Each epoch is distributed with the model's strategy (``experimental_distribute_dataset``).
Without ``steps_per_epoch`` (or with the dataset's own number of batches) every epoch starts
a fresh iterator; otherwise one iterator runs across epochs, as Keras 2 does.
"""

from __future__ import annotations

import contextlib
import logging
import math
import warnings

import numpy as np

from simdist.core import nest
from simdist.core.random import _default_state
from simdist.core.tensor import Tensor
from simdist.data.dataset import Dataset
from simdist.keras.utils.dataset_creator import DatasetCreator
from simdist.keras.utils.sequence import Sequence, sequence_dataset

__all__ = ["DataHandler", "unpack", "shuffle_seed"]


def unpack(data):
    """``(x, y, sample_weight)`` of one element (missing parts are None)."""
    if isinstance(data, tuple):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
        raise ValueError(
            f"Data is expected to be x, (x,), (x, y) or (x, y, sample_weight); got a tuple of "
            f"{len(data)} elements."
        )
    return data, None, None


def shuffle_seed() -> int:
    """The seed of fit's per-epoch shuffles: the global seed, or 0 when none is set."""
    seed = _default_state.global_seed
    return 0 if seed is None else int(seed)


def _as_array(value):
    if isinstance(value, Tensor):
        return np.asarray(value._value)
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return np.asarray(value.numpy())
    return np.asarray(value)


def _lists_to_tuples(value):
    if isinstance(value, tuple) or (
        isinstance(value, list) and any(hasattr(v, "shape") or isinstance(v, dict) for v in value)
    ):
        return tuple(_lists_to_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _lists_to_tuples(v) for k, v in value.items()}
    return value


def _is_distributed_input(x) -> bool:
    from simdist.distribute.input_lib import DistributedDataset, DistributedDatasetsFromFunction

    return isinstance(x, (DistributedDataset, DistributedDatasetsFromFunction))


class _NoUnbatchedWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "has no `batch` or `padded_batch` step" not in record.getMessage()


@contextlib.contextmanager
def _batches_expected():
    """Distribute a Sequence's dataset (whole batches from a generator) without the warning
    that such a pipeline has no ``batch`` step: here its elements are known to be batches."""
    from simdist.distribute import rebatch

    quiet = _NoUnbatchedWarning()
    rebatch._log.addFilter(quiet)
    try:
        yield
    finally:
        rebatch._log.removeFilter(quiet)


class DataHandler:
    """Batches per epoch, distributed by ``strategy``.

    Raises:
        ValueError: ``y`` with a Dataset, arrays of different lengths, an infinite dataset
            without ``steps``, or an empty input.
    """

    def __init__(
        self,
        x,
        y=None,
        sample_weight=None,
        batch_size=None,
        steps=None,
        shuffle=False,
        strategy=None,
        seed=None,
    ) -> None:
        self._strategy = strategy
        self._user_steps = steps
        self._persistent = None
        self.seed = shuffle_seed() if seed is None else int(seed)
        self._distributed = _is_distributed_input(x)
        if isinstance(x, DatasetCreator):
            if steps is None:
                raise ValueError(
                    "When using a `tf.keras.utils.experimental.DatasetCreator`, "
                    "`steps_per_epoch`, `validation_steps` or `steps` argument must be "
                    "provided in `Model.fit`, `Model.evaluate`, or `Model.predict`."
                )
            if y is not None or batch_size is not None:
                raise ValueError(
                    "`y` and `batch_size` are not supported with a DatasetCreator: its "
                    "dataset's elements must be (x, y) pairs, batched by the dataset function."
                )
            if strategy is None:
                from simdist.distribute.distribute_lib import get_strategy

                strategy = get_strategy()
            x = strategy.distribute_datasets_from_function(x, options=x.input_options)
            self._distributed = True
            self._dataset = x
            self._arrays = None
            self.inferred_steps = steps
            self._recreate = False  # one iterator across epochs, as Keras 2
            self._shuffle = False
        elif self._distributed:  # already distributed by the user (the MWMS API page's example)
            if y is not None or batch_size is not None:
                raise ValueError(
                    "`y` and `batch_size` are not supported with a distributed dataset: its "
                    "elements must be (x, y) pairs, batched before it was distributed."
                )
            self._dataset = x
            self._arrays = None
            self.inferred_steps = steps
            self._recreate = steps is None
            self._shuffle = False
        elif isinstance(x, Sequence):
            self._check_sequence_arguments(y, sample_weight, batch_size)
            self._sequence = x
            self._dataset = None
            self._arrays = None
            self.inferred_steps = steps if steps is not None else len(x)
            self._recreate = True
            self._shuffle = bool(shuffle) and shuffle != "batch"
        elif isinstance(x, Dataset):
            if y is not None:
                raise ValueError(
                    "`y` argument is not supported when using dataset as input; the dataset's "
                    "elements must be (x, y) pairs."
                )
            if batch_size is not None:
                raise ValueError(
                    "`batch_size` is not supported for a Dataset input: batch the dataset "
                    "itself (dataset.batch(...))."
                )
            self._dataset = x
            self._arrays = None
            cardinality = int(np.asarray(x.cardinality()._value))
            known = cardinality if cardinality >= 0 else None
            if cardinality == -1 and steps is None:
                raise ValueError(
                    "When providing an infinite dataset, you must specify the number of steps "
                    "to run (steps_per_epoch / steps)."
                )
            self.inferred_steps = steps if steps is not None else known
            self._recreate = steps is None or (known is not None and steps == known)
            self._shuffle = False
        else:
            if x is None:
                raise ValueError("Expected input data `x`, got None.")
            parts = (
                [x]
                + ([y] if y is not None else [])
                + ([sample_weight] if sample_weight is not None else [])
            )
            # Lists of arrays (several inputs/outputs) are structures, as Keras treats them
            # (a Dataset would read a list as one tensor).
            self._arrays = nest.map_structure(_as_array, _lists_to_tuples(tuple(parts)))
            lengths = {a.shape[0] for a in nest.flatten(self._arrays) if a.ndim}
            if len(lengths) != 1:
                raise ValueError(
                    f"Data cardinality is ambiguous: x, y and sample_weight have "
                    f"{sorted(lengths)} samples; make them the same length."
                )
            self.num_samples = lengths.pop()
            if self.num_samples == 0:
                raise ValueError("Expected non-empty input arrays (0 samples given).")
            self._batch_size = int(batch_size or 32)
            self._shuffle = bool(shuffle) and shuffle != "batch"
            full = math.ceil(self.num_samples / self._batch_size)
            self.inferred_steps = steps if steps is not None else full
            self._recreate = steps is None or steps == full
            self._dataset = None

    @staticmethod
    def _check_sequence_arguments(y, sample_weight, batch_size) -> None:
        for name, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None:
                raise ValueError(
                    f"`{name}` argument is not supported when using `keras.utils.Sequence` as "
                    "input: its batches must be (x, y) or (x, y, sample_weight) tuples."
                )
        if batch_size is not None:
            raise ValueError(
                "The `batch_size` argument must not be specified for the given input type: a "
                "`keras.utils.Sequence` yields whole batches."
            )

    def _epoch_dataset(self, epoch: int) -> Dataset:
        if self._sequence is not None:
            count = len(self._sequence)
            order = np.arange(count)
            if self._shuffle:
                order = np.random.default_rng([self.seed, int(epoch)]).permutation(count)
            return sequence_dataset(self._sequence, order[: self.inferred_steps])
        if self._arrays is None:
            return self._dataset
        arrays = self._arrays
        if self._shuffle:
            order = np.random.default_rng([self.seed, int(epoch)]).permutation(self.num_samples)
            arrays = nest.map_structure(lambda a: a[order], arrays)
        several_inputs = isinstance(arrays[0], tuple)  # (x,): not read as an (x, y) pair
        element = arrays if len(arrays) > 1 or several_inputs else arrays[0]
        dataset = Dataset.from_tensor_slices(element).batch(self._batch_size)
        if not self._recreate:
            dataset = dataset.repeat()
        return dataset

    def _distributed_iterator(self, epoch: int):
        dataset = self._epoch_dataset(epoch)
        if self._strategy is not None and not self._distributed:
            if self._sequence is not None:  # its elements are batches: no warning about that
                with _batches_expected():
                    dataset = self._strategy.experimental_distribute_dataset(dataset)
            else:
                dataset = self._strategy.experimental_distribute_dataset(dataset)
        return iter(dataset)

    def epoch_batches(self, epoch: int, skip: int = 0, skip_persistent: int = 0):
        """Yield ``(step, distributed_batch)`` for one epoch, after skipping ``skip`` steps.

        ``skip_persistent`` steps are first consumed from a cross-epoch iterator when one is
        (re)created (a resumed run fast-forwarding to where it stopped).
        """
        if self._recreate:
            iterator = self._distributed_iterator(epoch)
        else:
            if self._persistent is None:
                self._persistent = self._distributed_iterator(epoch)
                for _ in range(skip_persistent):
                    next(self._persistent, None)
            iterator = self._persistent
        step = 0
        while self.inferred_steps is None or step < self.inferred_steps:
            try:
                batch = next(iterator)
            except StopIteration:
                if self.inferred_steps is None:
                    self.inferred_steps = step
                elif not self._recreate:
                    warnings.warn(
                        "Your input ran out of data; interrupting training. Make sure that "
                        "your dataset can generate at least `steps_per_epoch * epochs` batches "
                        "(use the `.repeat()` function when building your dataset).",
                        stacklevel=3,
                    )
                    self.exhausted = True
                return
            if step >= skip:
                yield step, batch
            step += 1
        if self._sequence is not None:
            self._sequence.on_epoch_end()  # as Keras 2, after every epoch

    exhausted = False
    _sequence = None
