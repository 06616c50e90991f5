"""Transformations that select, count or combine elements: repeat, take, skip, shard, zip,
unique, assert_cardinality...

Each follows TF's element_spec and cardinality rules (INFINITE = -1, UNKNOWN = -2).
Arguments are checked when the transformation is built, as TF's eager kernels do.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from simdist import errors
from simdist.core import nest
from simdist.data import options as options_lib
from simdist.data import structure
from simdist.data.dataset import INFINITE, UNKNOWN, Dataset, as_count

__all__ = [
    "CacheDataset",
    "ConcatenateDataset",
    "OptionsDataset",
    "PrefetchDataset",
    "RepeatDataset",
    "ShardDataset",
    "SkipDataset",
    "TakeDataset",
    "UniqueDataset",
    "AssertCardinalityDataset",
    "ZipDataset",
]


class _RepeatDataset(Dataset):
    """The input ``count`` times, or forever (``Dataset.repeat``).

    As in TF, repeating forever an input that turns out to be empty ends at once instead of
    spinning.
    """

    def __init__(self, input_dataset: Dataset, count) -> None:
        super().__init__((input_dataset,))
        self._count = -1 if count is None else as_count(count, "count")

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        if self._count < 0:
            return 0 if n == 0 else INFINITE
        if self._count == 0:
            return 0
        if n in (INFINITE, UNKNOWN):
            return n
        return self._count * n

    def _iterate(self):
        epochs = itertools.count() if self._count < 0 else range(self._count)
        for _ in epochs:
            produced = False
            for element in self._input_datasets[0]._iterate():
                produced = True
                yield element
            if not produced and self._count < 0:
                return


class _TakeDataset(Dataset):
    """The first ``count`` elements; -1 for all (``Dataset.take``)."""

    def __init__(self, input_dataset: Dataset, count) -> None:
        super().__init__((input_dataset,))
        self._count = as_count(count, "count")

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        if n == UNKNOWN:
            return UNKNOWN
        if n == INFINITE:
            return self._count if self._count >= 0 else INFINITE
        return n if self._count < 0 else min(n, self._count)

    def _iterate(self):
        source = self._input_datasets[0]._iterate()
        if self._count < 0:
            yield from source
        else:
            yield from itertools.islice(source, self._count)


class _SkipDataset(Dataset):
    """All but the first ``count`` elements; -1 skips everything (``Dataset.skip``)."""

    def __init__(self, input_dataset: Dataset, count) -> None:
        super().__init__((input_dataset,))
        self._count = as_count(count, "count")

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        if n in (INFINITE, UNKNOWN):
            return n
        return 0 if self._count < 0 else max(0, n - self._count)

    def _iterate(self):
        source = self._input_datasets[0]._iterate()
        if self._count < 0:
            for _ in source:
                pass
            return
        yield from itertools.islice(source, self._count, None)


SHARD_HINT = -1  # ``tf.data.experimental.SHARD_HINT``: "shard here by the worker count"


class _ShardDataset(Dataset):
    """Elements ``index, index + num_shards, ...`` (``Dataset.shard``).

    ``shard(SHARD_HINT, i)`` marks where ``AutoShardPolicy.HINT`` shards a distributed
    pipeline (it becomes ``shard(num_workers, worker_index)``); iterated as it is, it raises
    TF's ``FailedPreconditionError``.
    """

    def __init__(self, input_dataset: Dataset, num_shards, index) -> None:
        super().__init__((input_dataset,))
        self._num_shards = as_count(num_shards, "num_shards")
        self._index = as_count(index, "index")
        if self._num_shards == SHARD_HINT:
            return
        if self._num_shards <= 0:
            raise errors.InvalidArgumentError(
                f"Number of shards must be greater than zero (currently num_shards = "
                f"{self._num_shards})."
            )
        if not 0 <= self._index < self._num_shards:
            raise errors.InvalidArgumentError(
                f"Index must be between 0 and {self._num_shards - 1} (currently index = "
                f"{self._index})."
            )

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        if self._num_shards == SHARD_HINT:
            return UNKNOWN  # decided by the worker count when distributed
        n = self._input_datasets[0]._cardinality()
        if n in (INFINITE, UNKNOWN):
            return n
        return n // self._num_shards + (1 if self._index < n % self._num_shards else 0)

    def _iterate(self):
        if self._num_shards == SHARD_HINT:
            raise errors.FailedPreconditionError(
                "`tf.data.Dataset.shard(SHARD_HINT, ...)` can only be used in "
                "`tf.distribute.Strategy.experimental_distribute_dataset()` with "
                "`tf.data.experimental.AutoShardPolicy.HINT` policy, or tf.data service with "
                "`tf.data.experimental.service.ShardingPolicy.HINT` processing mode."
            )
        source = self._input_datasets[0]._iterate()
        yield from itertools.islice(source, self._index, None, self._num_shards)


class _PrefetchDataset(Dataset):
    """The same elements (``Dataset.prefetch``): the pipeline is synchronous."""

    def __init__(self, input_dataset: Dataset, buffer_size) -> None:
        super().__init__((input_dataset,))
        self._buffer_size = as_count(buffer_size, "buffer_size")
        if self._buffer_size < options_lib.AUTOTUNE:
            raise errors.InvalidArgumentError(
                f"buffer_size must be >= 0 or tf.data.AUTOTUNE (-1), got {self._buffer_size}."
            )

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return self._input_datasets[0]._cardinality()

    def _iterate(self):
        return self._input_datasets[0]._iterate()


class _CacheDataset(Dataset):
    """Replays the first complete iteration's elements (``Dataset.cache``, in memory).

    An iteration abandoned before the end caches nothing; ``filename`` is accepted and
    ignored (the cache is always in memory).
    """

    def __init__(self, input_dataset: Dataset, filename: str) -> None:
        super().__init__((input_dataset,))
        self._filename = filename
        self._reset_state()

    def _reset_state(self) -> None:
        self._cached: list | None = None
        self._cache_lock = threading.Lock()

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return self._input_datasets[0]._cardinality()

    def _iterate(self):
        with self._cache_lock:
            cached = self._cached
        if cached is not None:
            yield from cached
            return
        seen = []
        for element in self._input_datasets[0]._iterate():
            seen.append(element)
            yield element
        with self._cache_lock:
            if self._cached is None:
                self._cached = seen


class _ZipDataset(Dataset):
    """Elements of several datasets side by side (``Dataset.zip``); stops at the shortest."""

    def __init__(self, datasets: Any) -> None:
        if isinstance(datasets, list):
            datasets = tuple(datasets)
        flat = nest.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError(
                    f"Dataset.zip takes a (nested) structure of datasets; found "
                    f"{type(d).__name__}. Wrap plain values with Dataset.from_tensors."
                )
        super().__init__(tuple(flat))
        self._template = datasets

    def _compute_element_spec(self) -> Any:
        specs = [d.element_spec for d in self._input_datasets]
        return nest.pack_sequence_as(self._template, specs)

    def _cardinality(self) -> int:
        result = INFINITE
        for d in self._input_datasets:
            n = d._cardinality()
            if n == UNKNOWN:
                return UNKNOWN
            if n != INFINITE and (result == INFINITE or n < result):
                result = n
        return result

    def _iterate(self):
        sources = [d._iterate() for d in self._input_datasets]
        for parts in zip(*sources, strict=False):  # TF: stop at the shortest input
            yield nest.pack_sequence_as(self._template, list(parts))


class _ConcatenateDataset(Dataset):
    """One dataset's elements, then another's (``Dataset.concatenate``)."""

    def __init__(self, input_dataset: Dataset, other: Dataset) -> None:
        if not isinstance(other, Dataset):
            raise TypeError(f"concatenate takes a Dataset, got {type(other).__name__}.")
        super().__init__((input_dataset, other))
        self._spec = structure.most_specific_spec(
            input_dataset.element_spec, other.element_spec, "dataset elements to concatenate"
        )

    def _compute_element_spec(self) -> Any:
        return self._spec

    def _cardinality(self) -> int:
        a, b = (d._cardinality() for d in self._input_datasets)
        if INFINITE in (a, b):
            return INFINITE
        if UNKNOWN in (a, b):
            return UNKNOWN
        return a + b

    def _iterate(self):
        for d in self._input_datasets:
            yield from d._iterate()


class _OptionsDataset(Dataset):
    """The input with options attached (``Dataset.with_options``)."""

    def __init__(self, input_dataset: Dataset, options: options_lib.Options) -> None:
        if not isinstance(options, options_lib.Options):
            raise TypeError(f"with_options takes a tf.data.Options, got {type(options).__name__}.")
        super().__init__((input_dataset,))
        self._options = options_lib.merge_options(options)  # a private copy

    def _own_options(self) -> options_lib.Options:
        return self._options

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return self._input_datasets[0]._cardinality()

    def _iterate(self):
        return self._input_datasets[0]._iterate()


class _UniqueDataset(Dataset):
    """Each distinct element once, at its first occurrence (``Dataset.unique``).

    As TF: elements must be one tensor of int32, int64 or string.
    """

    def __init__(self, input_dataset: Dataset) -> None:
        spec = input_dataset.element_spec
        flat = nest.flatten(spec)
        names = ("int32", "int64", "string")
        if len(flat) != 1 or flat[0].dtype.name not in names:
            raise TypeError(
                "Dataset.unique() only supports datasets with 1 component of type tf.int32, "
                f"tf.int64 or tf.string; this one's elements are {spec}."
            )
        super().__init__((input_dataset,))

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iterate(self):
        seen: set = set()
        for element in self._input_datasets[0]._iterate():
            (array,) = structure.flatten(element)
            key = (array.shape, tuple(array.ravel().tolist()))
            if key not in seen:
                seen.add(key)
                yield element


class _AssertCardinalityDataset(Dataset):
    """The input, declared to have ``expected`` elements (``assert_cardinality``): its
    cardinality is ``expected``, and iterating raises ``FailedPreconditionError`` as soon
    as the count is seen to differ, as TF does."""

    def __init__(self, input_dataset: Dataset, expected) -> None:
        super().__init__((input_dataset,))
        self._expected = as_count(expected, "expected_cardinality")

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return self._expected

    def _iterate(self):
        count, expected = 0, self._expected
        for element in self._input_datasets[0]._iterate():
            count += 1
            if expected != INFINITE and count > expected:
                raise errors.FailedPreconditionError(
                    f"Input dataset was expected to contain {_elements(expected)} but "
                    f"contained at least {_elements(count)}."
                )
            yield element
        if count != expected:
            raise errors.FailedPreconditionError(
                f"Input dataset was expected to contain {_elements(expected)} but contained "
                f"only {_elements(count)}."
            )


def _elements(n: int) -> str:
    if n == INFINITE:
        return "an infinite number of elements"
    return f"{n} element" + ("" if n == 1 else "s")


RepeatDataset = _RepeatDataset
TakeDataset = _TakeDataset
SkipDataset = _SkipDataset
ShardDataset = _ShardDataset
PrefetchDataset = _PrefetchDataset
CacheDataset = _CacheDataset
ZipDataset = _ZipDataset
ConcatenateDataset = _ConcatenateDataset
OptionsDataset = _OptionsDataset
UniqueDataset = _UniqueDataset
AssertCardinalityDataset = _AssertCardinalityDataset
