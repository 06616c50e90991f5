"""``Dataset.shuffle``: TF's buffered shuffle, with seeds that make every order reproducible.

The algorithm is TF's: fill a buffer with the first ``buffer_size`` elements; then, while
the buffer is not empty, pick a slot uniformly at random, emit its element, and put the
next input element in that slot (once the input ends, the last buffered element moves into
the emptied slot). ``buffer_size >= len(dataset)`` gives a uniform permutation.

Seeds follow ``simdist.core.random``: the global seed (``tf.random.set_seed``, else
simdist's default 0) and the op seed (``seed=``, else the next value of the unseeded-op
counter, taken when the dataset is built). Where TF is nondeterministic (no seeds at
all) simdist is still deterministic. The numbers are simdist's own (not TF's).

Epochs: each new iteration of the node (``iter(ds)`` again, or the next round of an
upstream ``repeat``) is epoch ``0, 1, 2...``. With ``reshuffle_each_iteration=True`` (the
default) epoch ``e`` draws from ``(global seed, op seed, e)``: a different, reproducible
order per epoch; with ``False`` every epoch replays epoch 0's order. Copies of a pipeline
(``Dataset._copy_graph``: one per simulated worker) count epochs from 0 independently, as
separate TF processes would.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import random as core_random
from simdist.data import structure
from simdist.data.dataset import Dataset, as_count
from simdist.data.iterator_state import EpochCounter

__all__ = ["ShuffleDataset", "resolve_seeds"]

_DATA_TAG = 0x7F5D_A7A5  # separates shuffle streams from tf.random op streams
_MASK64 = (1 << 64) - 1


def resolve_seeds(seed) -> tuple[int, int]:
    """The ``(global seed, op seed)`` pair for a dataset op built now with ``seed``.

    Uses ``simdist.core.random``'s seed state: the global seed (default 0) and, for
    ``seed=None``, the next value of its unseeded-op counter.
    """
    op_seed = None if seed is None else as_count(seed, "seed")
    state = core_random._current_state()
    global_seed = (
        core_random.DEFAULT_GLOBAL_SEED if state.global_seed is None else state.global_seed
    )
    if op_seed is None:
        op_seed = state.op_counter
        state.op_counter += 1
    return global_seed, op_seed


def epoch_generator(seeds: tuple[int, int], epoch: int) -> np.random.Generator:
    """The NumPy generator of one shuffle epoch: keyed by (global, op, epoch)."""
    words = [_DATA_TAG, seeds[0] & _MASK64, seeds[1] & _MASK64, epoch]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(words)))


class _ShuffleDataset(Dataset):
    """Elements in a seeded random order through a bounded buffer (``Dataset.shuffle``)."""

    def __init__(self, input_dataset: Dataset, buffer_size, seed, reshuffle) -> None:
        super().__init__((input_dataset,))
        self._buffer_size = as_count(buffer_size, "buffer_size")
        if self._buffer_size <= 0 and self._buffer_size != -1:
            raise errors.InvalidArgumentError(
                f"buffer_size must be greater than zero, got {self._buffer_size}."
            )
        self._seeds = resolve_seeds(seed)
        self._reshuffle = True if reshuffle is None else bool(reshuffle)
        self._reset_state()

    def _reset_state(self) -> None:
        self._epochs = EpochCounter()  # iterators' checkpoints record and replay its draws

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return self._input_datasets[0]._cardinality()

    def _iterate(self):
        yield from self._shuffled(self._input_datasets[0]._iterate())

    def _batches(self, size: int, drop_remainder: bool):
        """Over a slices source: the same algorithm and draws on the rows' indices, then
        each batch one gather of its rows (what ``batch`` would stack, the same bits)."""
        rows = self._input_datasets[0]._rows()
        if rows is None:
            return None
        template, components, n = rows
        return _gathered(template, components, self._shuffled(iter(range(n))), size, drop_remainder)

    def _shuffled(self, source):
        """``source``'s items in this epoch's order (the module docstring's algorithm)."""
        epoch = next(self._epochs) if self._reshuffle else 0
        rng = epoch_generator(self._seeds, epoch)
        size = self._buffer_size
        # buffer_size == -1 (AUTOTUNE) buffers the whole input, as a full shuffle.
        limit = None if size == -1 else size
        buffer = list(itertools.islice(source, limit))
        uniforms = iter(())
        while buffer:
            u = next(uniforms, None)
            if u is None:
                uniforms = iter(rng.random(1024).tolist())
                u = next(uniforms)
            slot = int(u * len(buffer))
            element = buffer[slot]
            refill = next(source, _END)
            if refill is _END:
                last = buffer.pop()
                if slot < len(buffer):
                    buffer[slot] = last
            else:
                buffer[slot] = refill
            yield element


def _gathered(template, components: list, order, size: int, drop_remainder: bool):
    """Batches of the rows ``order`` names, ``size`` at a time, one gather per component."""
    while True:
        index = np.fromiter(itertools.islice(order, size), dtype=np.intp)
        if not len(index) or (drop_remainder and len(index) < size):
            return
        yield structure.pack(template, [c[index] for c in components])


_END = object()

ShuffleDataset = _ShuffleDataset
