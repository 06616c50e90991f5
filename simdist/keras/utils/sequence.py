"""``tf.keras.utils.Sequence``: a batch source ``model.fit`` indexes batch by batch.

A subclass defines ``__len__`` (batches per epoch) and ``__getitem__(index)`` (the batch:
``x``, ``(x, y)`` or ``(x, y, sample_weight)``); ``on_epoch_end`` runs after every epoch.
``fit(sequence)`` takes ``len(sequence)`` steps per epoch (or ``steps_per_epoch``) and
distributes each batch with the model's strategy, as it does a batched Dataset's.
``shuffle=True`` visits the batches in ``np.random.default_rng([seed, epoch]).permutation``
order (``seed``: the global seed, or 0): Keras 2 shuffles with Python's ``random``, so its
order is not reproducible; simdist's is. ``workers`` / ``use_multiprocessing`` change
nothing: batches are fetched in order on the calling thread.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Sequence", "sequence_dataset"]


class Sequence:
    """Base class of batch sequences (``tf.keras.utils.Sequence``)."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10) -> None:
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__.")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement __len__.")

    def on_epoch_end(self) -> None:
        """Called after every epoch (shuffle your data here)."""

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]


def _as_tuple(batch):
    return tuple(batch) if isinstance(batch, list) else batch


def sequence_dataset(sequence: Sequence, order):
    """A Dataset of ``sequence[i]`` for ``i`` in ``order`` (each element one batch)."""
    from simdist.core import nest
    from simdist.core.shape import TensorShape
    from simdist.core.tensor_spec import TensorSpec
    from simdist.data.dataset import Dataset

    order = [int(i) for i in order]
    if not order:
        raise ValueError("The Sequence is empty: len(sequence) is 0.")
    first = _as_tuple(sequence[order[0]])

    def spec(leaf):
        array = np.asarray(getattr(leaf, "numpy", lambda: leaf)())
        return TensorSpec(TensorShape([None, *array.shape[1:]]), array.dtype)

    signature = nest.map_structure(spec, first)

    def batches():
        yield first
        for index in order[1:]:
            yield _as_tuple(sequence[index])

    return Dataset.from_generator(batches, output_signature=signature)
