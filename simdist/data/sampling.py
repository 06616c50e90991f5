"""Random and chosen mixtures: ``Dataset.random``, ``counter``, ``sample_from_datasets``,
``choose_from_datasets``.

Seeds follow ``simdist.data.shuffle.resolve_seeds`` (the global seed, and the op seed or
the unseeded-op counter), so every run draws the same numbers; the numbers are simdist's
(TF draws from its own Philox stream). ``rerandomize_each_iteration=True`` draws anew on
each iteration (epoch ``e`` from ``(seeds, e)``, recorded in iterator checkpoints as
``shuffle``'s epochs are); otherwise every iteration repeats the first one's draws.

Exhausted inputs are TF's rule: ``sample_from_datasets`` stops at the first exhausted input
with ``stop_on_empty_dataset=True`` and otherwise keeps sampling among the others;
``choose_from_datasets`` (default ``stop_on_empty_dataset=True``) likewise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.tensor_spec import TensorSpec
from simdist.data import structure
from simdist.data.dataset import INFINITE, UNKNOWN, Dataset, as_count
from simdist.data.iterator_state import EpochCounter
from simdist.data.shuffle import resolve_seeds

__all__ = ["ChooseDataset", "CounterDataset", "RandomDataset", "SampleDataset"]

_RANDOM_TAG, _SAMPLE_TAG = 0x5EED_DA7A, 0x5A3B_1E00  # separate streams from shuffle's


def _generator(tag: int, seeds: tuple[int, int], epoch: int) -> np.random.Generator:
    words = [tag, seeds[0] & (2**64 - 1), seeds[1] & (2**64 - 1), epoch]
    return np.random.Generator(np.random.Philox(np.random.SeedSequence(words)))


class _Seeded(Dataset):
    """A node drawing random numbers: seeds resolved when built, an epoch per iteration."""

    _tag = 0

    def _seed(self, seed, rerandomize) -> None:
        self._seeds = resolve_seeds(seed)
        self._rerandomize = bool(rerandomize)
        self._reset_state()

    def _reset_state(self) -> None:
        self._epochs = EpochCounter()

    def _rng(self) -> np.random.Generator:
        epoch = next(self._epochs) if self._rerandomize else 0
        return _generator(self._tag, self._seeds, epoch)


class _RandomDataset(_Seeded):
    """Uniform random int64 scalars, forever (``Dataset.random``)."""

    _tag = _RANDOM_TAG

    def __init__(self, seed=None, rerandomize_each_iteration=None) -> None:
        super().__init__()
        self._seed(seed, rerandomize_each_iteration)

    def _compute_element_spec(self) -> Any:
        return TensorSpec([], dtypes.int64)

    def _cardinality(self) -> int:
        return INFINITE

    def _iterate(self):
        rng = self._rng()
        info = np.iinfo(np.int64)
        while True:
            for value in rng.integers(info.min, info.max, size=256, dtype=np.int64, endpoint=True):
                yield np.array(value, dtype=np.int64)


class _CounterDataset(Dataset):
    """``start, start + step, ...`` forever (``Dataset.counter``, ``experimental.Counter``)."""

    def __init__(self, start=0, step=1, dtype=dtypes.int64) -> None:
        super().__init__()
        self._start, self._step = as_count(start, "start"), as_count(step, "step")
        self._dtype = dtypes.as_dtype(dtype)

    def _compute_element_spec(self) -> Any:
        return TensorSpec([], self._dtype)

    def _cardinality(self) -> int:
        return INFINITE

    def _iterate(self):
        value, np_type = self._start, self._dtype.as_numpy_dtype
        while True:
            yield np.array(value, dtype=np_type)
            value += self._step


def _common_spec(datasets: list[Dataset], what: str) -> Any:
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"{what} takes a list of tf.data.Dataset, got {type(d).__name__}.")
    if not datasets:
        raise ValueError(f"Invalid `datasets`: {what} needs at least one dataset.")
    spec = datasets[0].element_spec
    for d in datasets[1:]:
        spec = structure.most_specific_spec(spec, d.element_spec, f"datasets of {what}")
    return spec


class _SampleDataset(_Seeded):
    """Each element from an input picked at random by ``weights`` (``sample_from_datasets``)."""

    _tag = _SAMPLE_TAG

    def __init__(self, datasets, weights, seed, stop_on_empty_dataset, rerandomize) -> None:
        datasets = list(datasets)
        self._spec = _common_spec(datasets, "sample_from_datasets")
        if isinstance(weights, Dataset):
            raise NotImplementedError(
                "sample_from_datasets with a dataset of weights is not in simdist; pass a "
                "list or tensor of weights."
            )
        n = len(datasets)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(_values(weights), np.float64)
        if w.shape != (n,):
            raise ValueError(
                f"`weights` must have one entry per dataset ({n}), got shape {list(w.shape)}."
            )
        if np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
            raise errors.InvalidArgumentError(
                f"`weights` must be finite, non-negative and not all zero, got {w.tolist()}."
            )
        super().__init__(tuple(datasets))
        self._weights = w / w.sum()
        self._stop = bool(stop_on_empty_dataset)
        self._seed(seed, rerandomize)

    def _compute_element_spec(self) -> Any:
        return self._spec

    def _cardinality(self) -> int:
        counts = [d._cardinality() for d in self._input_datasets]
        return INFINITE if all(c == INFINITE for c in counts) else UNKNOWN

    def _iterate(self):
        rng = self._rng()
        sources = [d._iterate() for d in self._input_datasets]
        weights = self._weights.copy()
        while weights.sum() > 0:
            for u in rng.random(256):
                cumulative = np.cumsum(weights / weights.sum())
                pick = min(int(np.searchsorted(cumulative, u, side="right")), len(weights) - 1)
                while weights[pick] == 0:  # rounding at the top: the last live input
                    pick -= 1
                element = next(sources[pick], _END)
                if element is _END:
                    if self._stop:
                        return
                    weights[pick] = 0.0
                    if weights.sum() <= 0:
                        return
                    continue
                yield element


class _ChooseDataset(Dataset):
    """Each element from the input that ``choice_dataset`` names (``choose_from_datasets``)."""

    def __init__(self, datasets, choice_dataset: Dataset, stop_on_empty_dataset) -> None:
        datasets = list(datasets)
        self._spec = _common_spec(datasets, "choose_from_datasets")
        if not isinstance(choice_dataset, Dataset):
            raise TypeError(
                f"`choice_dataset` must be a tf.data.Dataset, got {type(choice_dataset).__name__}."
            )
        choice = choice_dataset.element_spec
        scalar = isinstance(choice, TensorSpec) and choice.shape.rank == 0
        if not scalar or choice.dtype != dtypes.int64:
            raise TypeError(
                f"Invalid `choice_dataset`: its elements must be scalar tf.int64, got {choice}."
            )
        super().__init__((choice_dataset, *datasets))
        self._stop = True if stop_on_empty_dataset is None else bool(stop_on_empty_dataset)

    def _compute_element_spec(self) -> Any:
        return self._spec

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iterate(self):
        choices, *inputs = self._input_datasets
        sources = [d._iterate() for d in inputs]
        done = [False] * len(sources)
        for choice in choices._iterate():
            index = int(choice)
            if not 0 <= index < len(sources):
                raise errors.InvalidArgumentError(
                    f"Selector index out of range: choice {index}, but there are "
                    f"{len(sources)} datasets."
                )
            if done[index]:
                continue
            element = next(sources[index], _END)
            if element is _END:
                if self._stop:
                    return
                done[index] = True
                if all(done):
                    return
                continue
            yield element


def _values(weights) -> Any:
    return weights._value if hasattr(weights, "_value") else weights


_END = object()

RandomDataset = _RandomDataset
CounterDataset = _CounterDataset
SampleDataset = _SampleDataset
ChooseDataset = _ChooseDataset
