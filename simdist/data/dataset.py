"""``tf.data.Dataset``: the immutable pipeline node, its public methods, and its iterator.

A dataset is a description, never a buffer of results. Each node knows

* its inputs, ``_inputs()`` (a list of parent datasets, in order): a later pass (FILE
  auto-sharding, ``simdist explain-input``) walks the graph from the final node up to its
  sources; ``_with_inputs(new_inputs)`` returns a copy of the node over other parents, so
  such a pass can rebuild the pipeline (for example with a ``shard`` inserted after a file
  list). Sources have no inputs; file sources set ``_reads_files = True`` and keep the
  dataset of file names as their input (see ``simdist.data.files``);
* its ``element_spec`` (computed lazily, cached) and its cardinality (``_cardinality()``,
  an int with ``INFINITE = -1`` and ``UNKNOWN = -2``);
* how to make a fresh internal iterator, ``_iterate()``: a Python generator of NumPy
  elements (``simdist.data.structure``).

``iter(dataset)`` makes a new ``simdist.data.iterator.Iterator`` each time (iterating
twice restarts from the beginning); it hands out elements as Tensors on the host CPU.

Transformations live in ``batching``, ``transforms`` (selecting, counting, combining),
``functional`` (user functions: map, filter, flat_map, interleave) and ``shuffle``; the
sources in ``sources`` and ``files``. This module declares the public methods and forwards.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from collections.abc import Iterator as _PyIterator
from typing import TYPE_CHECKING, Any

import numpy as np

from simdist.core.tensor import Tensor, make_tensor
from simdist.data import options as options_lib
from simdist.data import structure
from simdist.data.constructors import SourceConstructors

if TYPE_CHECKING:
    from simdist.data.iterator import Iterator

__all__ = ["Dataset", "INFINITE", "UNKNOWN", "as_count", "cardinality"]

INFINITE = -1
UNKNOWN = -2


def as_count(value, name: str) -> int:
    """An integer argument (Python int, NumPy integer or scalar integer tensor)."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be an integer, got {value!r}.")
    return int(value)


class Dataset(SourceConstructors):
    """A sequence of elements built by a chain of transformations (``tf.data.Dataset``).

    >>> import simdist as tf
    >>> ds = tf.data.Dataset.range(5).map(lambda x: x * 2).batch(2)
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2], [4, 6], [8]]
    """

    _reads_files = False  # file sources (TextLineDataset) set this; see the module docstring
    _is_dataset = True  # a dataset can be a dataset's element (``window``; ``structure``)
    _yields_datasets = False  # ``window`` sets it: its elements are datasets

    def __init__(self, inputs: tuple[Dataset, ...] = ()) -> None:
        self._input_datasets = tuple(inputs)
        self._spec_cache: Any = None
        self._spec_lock = threading.RLock()

    # --- what a subclass provides ---------------------------------------------------------
    def _compute_element_spec(self) -> Any:
        raise NotImplementedError

    def _cardinality(self) -> int:
        raise NotImplementedError

    def _iterate(self) -> _PyIterator:
        raise NotImplementedError

    def _batches(self, size: int, drop_remainder: bool) -> _PyIterator | None:
        """Whole batches of ``size`` elements, as ``batch`` would stack them, where this
        dataset can cut them at once (a slices source, a shuffle of one); None: ``batch``
        stacks its elements."""
        return None

    def _rows(self) -> tuple[Any, list, int] | None:
        """``(structure, component arrays, length)`` where every element is row ``i`` of
        plain arrays (a slices source), so a batch of them is one gather; else None."""
        return None

    def _own_options(self) -> options_lib.Options | None:
        return None

    # --- the graph --------------------------------------------------------------------------
    def _inputs(self) -> list[Dataset]:
        """The datasets this one reads from, in order (empty for a source)."""
        return list(self._input_datasets)

    def _with_inputs(self, inputs: list[Dataset]) -> Dataset:
        """A copy of this node reading from ``inputs`` instead (same transformation)."""
        if len(inputs) != len(self._input_datasets):
            raise ValueError(
                f"{type(self).__name__} has {len(self._input_datasets)} inputs; got {len(inputs)}."
            )
        clone = copy.copy(self)
        clone._input_datasets = tuple(inputs)
        clone._spec_cache = None
        clone._spec_lock = threading.RLock()
        clone._reset_state()
        return clone

    def _reset_state(self) -> None:
        """Called on copies: restart per-node state (shuffle's epoch counter, caches)."""

    def _copy_graph(self) -> Dataset:
        """A deep copy of the pipeline with fresh state, as another worker would build it."""
        return self._with_inputs([d._copy_graph() for d in self._input_datasets])

    # --- properties ---------------------------------------------------------------------------
    @property
    def element_spec(self) -> Any:
        """The type of one element: a nested structure of ``tf.TensorSpec``."""
        with self._spec_lock:
            if self._spec_cache is None:
                self._spec_cache = (self._compute_element_spec(),)
            return self._spec_cache[0]

    def cardinality(self) -> Tensor:
        """Number of elements as a scalar int64 tensor; -1 infinite, -2 unknown."""
        return make_tensor(np.array(self._cardinality(), dtype=np.int64))

    def options(self) -> options_lib.Options:
        """The options of this dataset, merged from every upstream ``with_options`` (frozen)."""
        found = self._collect_options()
        merged = options_lib.merge_options(*found) if found else options_lib.Options()
        merged._freeze()
        return merged

    def _collect_options(self) -> list[options_lib.Options]:
        found: list[options_lib.Options] = []
        for parent in self._input_datasets:
            found.extend(parent._collect_options())
        own = self._own_options()
        if own is not None:
            found.append(own)
        return found

    # --- Python protocol ----------------------------------------------------------------------
    def __iter__(self) -> Iterator:
        from simdist.data.iterator import Iterator

        return Iterator(self)

    def __len__(self) -> int:
        n = self._cardinality()
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise TypeError(
                "The dataset length is unknown. Use dataset.cardinality() or iterate it."
            )
        return n

    def __bool__(self) -> bool:
        return True  # as TF: a dataset is truthy whatever its length

    def __repr__(self) -> str:
        return f"<{type(self).__name__} element_spec={self.element_spec}>"

    def as_numpy_iterator(self) -> _PyIterator:
        """Iterate elements as NumPy values (scalars for rank 0; strings as ``bytes``).

        Raises:
            TypeError: the elements are datasets (``window``), as in TF.
        """
        if self._yields_datasets:  # others raise at their first dataset element
            structure.to_numpy(structure.dummy_element(self.element_spec, 1))
        return (structure.to_numpy(e) for e in self._iterate())

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``, which must return a Dataset."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(
                f"`transformation_func` must return a Dataset; got {type(out).__name__}."
            )
        return out

    def reduce(self, initial_state, reduce_func: Callable) -> Any:
        """Fold the elements: ``state = reduce_func(state, element)``, from ``initial_state``."""
        state = structure.to_tensors(structure.normalize(initial_state, "reduce state"))
        for element in self:
            state = structure.to_tensors(
                structure.normalize(reduce_func(state, element), "reduce state")
            )
        return state

    # --- transformations ---------------------------------------------------------------------
    def batch(
        self,
        batch_size,
        drop_remainder: bool = False,
        num_parallel_calls=None,
        deterministic=None,
        name: str | None = None,
    ) -> Dataset:
        """Stack consecutive elements into batches of ``batch_size``."""
        from simdist.data import batching

        return batching.BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(
        self,
        batch_size,
        padded_shapes=None,
        padding_values=None,
        drop_remainder: bool = False,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements of different shapes, padding each to a common shape."""
        from simdist.data import batching

        return batching.PaddedBatchDataset(
            self, batch_size, padded_shapes, padding_values, drop_remainder
        )

    def ragged_batch(
        self,
        batch_size,
        drop_remainder: bool = False,
        row_splits_dtype=None,
        name: str | None = None,
    ) -> Dataset:
        """Batch elements of different shapes: a component with an unknown dimension becomes
        a ``tf.RaggedTensor`` (its last unknown axis ragged), others batch densely."""
        from simdist.data import ragged_elements

        return ragged_elements.RaggedBatchDataset(self, batch_size, drop_remainder)

    def unbatch(self, name: str | None = None) -> Dataset:
        """Split each element along its first dimension into several elements."""
        from simdist.data import batching

        return batching.UnbatchDataset(self)

    def shuffle(
        self, buffer_size, seed=None, reshuffle_each_iteration=None, name: str | None = None
    ) -> Dataset:
        """Randomly shuffle through a buffer of ``buffer_size`` elements (seeded)."""
        from simdist.data import shuffle

        return shuffle.ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name: str | None = None) -> Dataset:
        """The dataset ``count`` times (forever for ``None`` or -1)."""
        from simdist.data import transforms

        return transforms.RepeatDataset(self, count)

    def take(self, count, name: str | None = None) -> Dataset:
        """The first ``count`` elements (all of them for -1)."""
        from simdist.data import transforms

        return transforms.TakeDataset(self, count)

    def skip(self, count, name: str | None = None) -> Dataset:
        """All but the first ``count`` elements (nothing for -1)."""
        from simdist.data import transforms

        return transforms.SkipDataset(self, count)

    def shard(self, num_shards, index, name: str | None = None) -> Dataset:
        """Every ``num_shards``-th element, starting at ``index``."""
        from simdist.data import transforms

        return transforms.ShardDataset(self, num_shards, index)

    def prefetch(self, buffer_size, name: str | None = None) -> Dataset:
        """Same elements (simdist's pipeline is synchronous: prefetching changes no value)."""
        from simdist.data import transforms

        return transforms.PrefetchDataset(self, buffer_size)

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Remember the elements of the first complete iteration and replay them after."""
        from simdist.data import transforms

        return transforms.CacheDataset(self, filename)

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements followed by ``dataset``'s (compatible element types)."""
        from simdist.data import transforms

        return transforms.ConcatenateDataset(self, dataset)

    def enumerate(self, start=0, name: str | None = None) -> Dataset:
        """Pairs ``(index, element)`` with an int64 index counting from ``start``."""
        from simdist.data import sources, transforms

        first = as_count(start, "start")
        counter = sources.RangeDataset(first, first + 1, infinite=True)
        return transforms.ZipDataset((counter, self))

    def with_options(self, options: options_lib.Options, name: str | None = None) -> Dataset:
        """This dataset with ``options`` merged over the options set upstream."""
        from simdist.data import transforms

        return transforms.OptionsDataset(self, options)

    def scan(self, initial_state, scan_func: Callable, name: str | None = None) -> Dataset:
        """``(state, out) = scan_func(state, element)`` over the elements; emits ``out``."""
        from simdist.data import functional

        return functional.ScanDataset(self, initial_state, scan_func)

    def take_while(self, predicate: Callable, name: str | None = None) -> Dataset:
        """The elements up to (not including) the first for which ``predicate`` is False."""
        from simdist.data import functional

        return functional.TakeWhileDataset(self, predicate)

    def unique(self, name: str | None = None) -> Dataset:
        """Each distinct element once (int32, int64 or string elements)."""
        from simdist.data import transforms

        return transforms.UniqueDataset(self)

    def group_by_window(
        self, key_func, reduce_func, window_size=None, window_size_func=None, name=None
    ) -> Dataset:
        """Windows of elements with the same key, each reduced by ``reduce_func(key, ds)``."""
        from simdist.data import grouping

        return grouping.GroupByWindowDataset(
            self, key_func, reduce_func, window_size, window_size_func
        )

    def bucket_by_sequence_length(
        self,
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes=None,
        padding_values=None,
        pad_to_bucket_boundary=False,
        no_padding=False,
        drop_remainder=False,
        name=None,
    ) -> Dataset:
        """Batches of elements of similar length, padded within each batch."""
        from simdist.data import grouping

        return grouping.bucket_by_sequence_length(
            self,
            element_length_func,
            bucket_boundaries,
            bucket_batch_sizes,
            padded_shapes,
            padding_values,
            pad_to_bucket_boundary,
            no_padding,
            drop_remainder,
        )

    def rebatch(self, batch_size, drop_remainder: bool = False, name=None) -> Dataset:
        """The batches re-cut to ``batch_size`` (or a list of sizes in turn)."""
        from simdist.data import grouping

        return grouping.RebatchDataset(self, batch_size, drop_remainder)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None) -> Dataset:
        """Windows of ``size`` elements every ``shift`` (default ``size``) elements, taking
        every ``stride``-th; each window is a dataset (one per component of a structure)."""
        from simdist.data.windowing import WindowDataset

        return WindowDataset(self, size, shift, stride, drop_remainder)

    def get_single_element(self, name: str | None = None) -> Any:
        """The one element of a dataset that has exactly one.

        Raises:
            InvalidArgumentError: the dataset is empty or has more than one element.
        """
        from simdist import errors

        elements = self._iterate()
        first = next(elements, _NONE)
        if first is _NONE:
            raise errors.InvalidArgumentError("Dataset was empty.")
        if next(elements, _NONE) is not _NONE:
            raise errors.InvalidArgumentError("Dataset had more than one element.")
        return structure.to_tensors(first)

    def map(
        self,
        map_func: Callable,
        num_parallel_calls=None,
        deterministic=None,
        name: str | None = None,
    ) -> Dataset:
        """Apply ``map_func`` to each element (eagerly, once per element, in order)."""
        from simdist.data import functional

        return functional.MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate: Callable, name: str | None = None) -> Dataset:
        """The elements for which ``predicate`` returns a scalar ``True``."""
        from simdist.data import functional

        return functional.FilterDataset(self, predicate)

    def flat_map(self, map_func: Callable, name: str | None = None) -> Dataset:
        """Concatenate the datasets ``map_func`` returns for each element."""
        from simdist.data import functional

        return functional.InterleaveDataset(self, map_func, 1, 1, flat=True)

    def interleave(
        self,
        map_func: Callable,
        cycle_length=None,
        block_length=None,
        num_parallel_calls=None,
        deterministic=None,
        name: str | None = None,
    ) -> Dataset:
        """Round-robin over ``cycle_length`` of the datasets ``map_func`` returns."""
        from simdist.data import functional

        return functional.InterleaveDataset(self, map_func, cycle_length, block_length)


_NONE = object()


def cardinality(dataset: Dataset) -> Tensor:
    """``tf.data.experimental.cardinality``: the length of ``dataset`` as an int64 tensor.

    Returns -1 (INFINITE) for an infinite dataset and -2 (UNKNOWN) when it cannot be known
    without iterating (after ``filter``, for file readers...).

    Raises:
        TypeError: ``dataset`` is not a Dataset.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"cardinality takes a tf.data.Dataset, got {type(dataset).__name__}.")
    return dataset.cardinality()
