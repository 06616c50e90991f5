"""Auto-sharding one worker's input pipeline across workers, by TF's ``AutoShardPolicy`` rules.

``experimental_distribute_dataset`` gives every worker a copy of the user's pipeline and
rewrites it so that the workers read different data. simdist restates the rewrite of
tensorflow/core/grappler/optimizers/data/auto_shard.cc (and the ShardDataset kernel it
inserts) on simdist's dataset graph; the behaviour below was checked against TF 2.21.

* **OFF**: nothing changes; every worker reads everything.
* **FILE**: walk the pipeline from its last node towards its sources and shard the *file
  names* of the reader closest to the end, so that worker ``w`` reads files ``w, w + W,
  ...`` (in the order of the names dataset). The walk passes through element-wise and
  batching nodes (batch, padded_batch, unbatch, map, filter, shuffle, repeat, take, skip,
  shard, cache, prefetch, with_options, and interleave/flat_map whose function reads no
  file), enters every input of zip and concatenate, and stops at:

  - a ``TextLineDataset``, or an interleave/flat_map whose function builds one: its input
    (the file names) gets the shard. Shuffles upstream of that point (the shuffle of
    ``list_files``) are removed and one of them is put back *after* the shard, so worker
    ``w`` reads its own files in a shuffled order (whatever the seed: no worker depends on
    another's shuffle);
  - an interleave/flat_map whose input comes, through pass-through nodes, from an
    interleave/flat_map or file reader fed by ``from_tensor_slices``/``from_tensors`` (TF's
    rule for nested flat_maps; ``TextLineDataset(list)`` counts as one): the shard goes
    right after that inner node, so the workers share the *elements* (lines), not files;
  - an in-memory source (range, from_tensor_slices, from_tensors, from_generator), or a
    node outside the lists above: no file to shard (TF's NotFound).

  FILE raises ``NotFoundError`` when no file can be sharded. With fewer files than workers
  the shard fails at the first ``get_next`` of workers ``w < files`` with TF's
  ``InvalidArgumentError`` ("Could not apply FILE based sharding..."); workers
  ``w >= files`` get no data. With one worker, FILE changes nothing.
* **AUTO**: FILE; when no file can be sharded, DATA, with TF's warning (logged on logger
  ``"simdist"`` when there is more than one worker). Too few files is *not* a reason to
  fall back (TF 2.21 raises the FILE error above under AUTO too).
* **DATA**: every worker runs the whole pipeline; the global batches are split into
  ``num_replicas_in_sync`` slices each (``rebatch.split_each_batch``) and worker ``w`` keeps
  slices ``w, w + W, ...`` (``shard_stream``, applied by ``rebatch.RebatchPlan``): worker
  ``w``'s replica ``r`` gets slice ``w + r * W`` of every global batch.
* **HINT**: every ``dataset.shard(SHARD_HINT, index)`` in the pipeline becomes
  ``shard(W, w)``; a pipeline without a hint is not sharded (as TF).

Shuffling before DATA sharding: every worker must shuffle in the same order. simdist's
shuffles are seeded at construction (``simdist.data.shuffle``), so virtual workers and MPI
ranks running the same program always agree; in TF an unseeded shuffle differs between
worker processes (elements are then repeated and lost), so give it a ``seed``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator
from typing import NamedTuple

from simdist import errors
from simdist.data import batching, functional, shuffle, sources, structure, transforms
from simdist.data.dataset import Dataset
from simdist.data.options import AutoShardPolicy

__all__ = [
    "SHARD_HINT",
    "AutoShardDataset",
    "ShardResult",
    "auto_shard_dataset",
    "shard_stream",
]

SHARD_HINT = transforms.SHARD_HINT
_log = logging.getLogger("simdist")

FILE_SHARD_ADVICE = (
    "If you are using datasets with distribution strategy, consider setting the auto "
    "sharding policy to either DATA or OFF using the `experimental_distribute."
    "auto_shard_policy` option of `tf.data.Options()`. Or, split your input files into a "
    "larger number of small files such that number of files is greater than number of "
    "shards/workers."
)
_DATA_ADVICE = (
    "Consider either turning off auto-sharding or switching the auto_shard_policy to DATA "
    "to shard this dataset: build a `tf.data.Options()`, set "
    "`options.experimental_distribute.auto_shard_policy = AutoShardPolicy.DATA` and apply "
    "it with `dataset = dataset.with_options(options)`."
)

_UNSHARDABLE = (
    sources.TensorSliceDataset,
    sources.TensorDataset,
    sources.RangeDataset,
    sources.GeneratorDataset,
)
_TENSOR_SOURCES = (sources.TensorSliceDataset, sources.TensorDataset)
_MULTI_INPUT = (transforms.ZipDataset, transforms.ConcatenateDataset)
_FUNC = (functional.InterleaveDataset,)
_PASS_THROUGH = (
    batching.BatchDataset,
    batching.PaddedBatchDataset,
    batching.UnbatchDataset,
    transforms.CacheDataset,
    functional.FilterDataset,
    functional.MapDataset,
    transforms.OptionsDataset,
    transforms.PrefetchDataset,
    transforms.RepeatDataset,
    transforms.ShardDataset,
    shuffle.ShuffleDataset,
    transforms.SkipDataset,
    transforms.TakeDataset,
)
_MAX_FUNCTION_DEPTH = 8


class _NotFound(Exception):
    """No file source to shard (TF's NotFound status from the FILE rewrite)."""


class ShardResult(NamedTuple):
    """A worker's pipeline after auto-sharding, and the policy that was applied.

    ``policy`` is never AUTO: it is FILE or DATA for AUTO (DATA sharding itself happens
    after the rebatch, see ``simdist.distribute.rebatch``).
    """

    dataset: Dataset
    policy: AutoShardPolicy


def shard_stream(source: Iterator, num_shards: int, index: int) -> Iterator:
    """Elements ``index, index + num_shards, ...`` of ``source``, requiring non-empty shards.

    As the ShardDataset that auto-sharding inserts: when this shard gets a first element
    but the input has fewer than ``num_shards`` elements, the first pull fails (TF's
    message speaks of files whatever is sharded); a shard with no element at all is empty.

    Raises:
        InvalidArgumentError: the input has fewer than ``num_shards`` elements and more
            than ``index``.
    """
    if num_shards == 1:
        yield from source
        return
    end = object()
    for _ in range(index):
        if next(source, end) is end:
            return
    first = next(source, end)
    if first is end:
        return
    for _ in range(num_shards - index - 1):
        if next(source, end) is end:
            raise errors.InvalidArgumentError(
                f"Could not apply FILE based sharding: the dataset only has {index + 1} "
                f"file(s), which is not enough for the required {num_shards} "
                f"shards/workers. {FILE_SHARD_ADVICE}"
            )
    yield first
    yield from itertools.islice(source, index, None, num_shards)


class AutoShardDataset(transforms._ShardDataset):
    """The shard auto-sharding inserts: ``Dataset.shard(num_shards, index)`` (same element
    spec and cardinality) that also refuses an empty shard, as TF's does."""

    def _iterate(self) -> Iterator:
        return shard_stream(self._input_datasets[0]._iterate(), self._num_shards, self._index)


def _name(node: Dataset) -> str:
    return type(node).__name__.lstrip("_")


def _function_reads_files(node: Dataset, depth: int = 0) -> bool:
    """Whether an interleave/flat_map's function builds a file reader (TF looks in the
    traced function; simdist calls it on a stand-in element, then on the first real one)."""
    if depth > _MAX_FUNCTION_DEPTH:
        return False
    made = None
    try:
        spec = node._inputs()[0].element_spec
        made = node._dataset_for(structure.dummy_element(spec, 2, fill=2))
    except Exception:  # noqa: BLE001 - any: the function may reject a stand-in; real data decides
        # The first real element: the user's function failing on it is a real error (TF's
        # would have failed when it was traced), so it propagates.
        for element in node._inputs()[0]._iterate():
            made = node._dataset_for(element)
            break
    return made is not None and _graph_reads_files(made, depth + 1)


def _graph_reads_files(dataset: Dataset, depth: int) -> bool:
    stack = [dataset]
    while stack:
        node = stack.pop()
        if node._reads_files:
            return True
        if isinstance(node, _FUNC) and _function_reads_files(node, depth):
            return True
        stack.extend(node._inputs())
    return False


def _is_reader_source(node: Dataset) -> bool:
    """A node whose input is a stream of file names (TF: a reader, or a func op with one)."""
    return node._reads_files or (isinstance(node, _FUNC) and _function_reads_files(node))


def _func_over_tensors(node: Dataset) -> Dataset | None:
    """From an interleave's input, through pass-through nodes, the first func node (or
    file reader) fed directly by from_tensor_slices/from_tensors, else None."""
    while True:
        if (isinstance(node, _FUNC) or node._reads_files) and isinstance(
            node._inputs()[0], _TENSOR_SOURCES
        ):
            return node
        if not isinstance(node, _PASS_THROUGH):
            return None
        node = node._inputs()[0]


def _rebuild(node: Dataset, target: Dataset, replace: Callable[[Dataset], Dataset]) -> Dataset:
    """``node`` with ``target`` (on its single-input chain) swapped for ``replace(target)``."""
    if node is target:
        return replace(target)
    inputs = node._inputs()
    return node._with_inputs([_rebuild(inputs[0], target, replace), *inputs[1:]])


def _strip_shuffles(node: Dataset, found: list) -> Dataset:
    """The subgraph without its shuffles; ``found`` collects them (TF's visiting order)."""
    if isinstance(node, shuffle.ShuffleDataset):
        found.append(node)
        return _strip_shuffles(node._inputs()[0], found)
    inputs = node._inputs()
    new_inputs = [_strip_shuffles(p, found) for p in inputs]
    if all(a is b for a, b in zip(new_inputs, inputs, strict=True)):
        return node
    return node._with_inputs(new_inputs)


def _shard_input_of(node: Dataset, num_workers: int, index: int) -> Dataset:
    """``node`` reading a shard of its input; upstream shuffles move after the shard."""
    found: list = []
    upstream = _strip_shuffles(node._inputs()[0], found)
    sharded: Dataset = AutoShardDataset(upstream, num_workers, index)
    if found:
        sharded = found[-1]._with_inputs([sharded])
    return node._with_inputs([sharded, *node._inputs()[1:]])


def _shard_by_file(node: Dataset, num_workers: int, index: int) -> Dataset:
    """The FILE rewrite of the pipeline ending at ``node``.

    Raises:
        _NotFound: no file source to shard.
    """
    if isinstance(node, _UNSHARDABLE):
        raise _NotFound(f"Found an unshardable source dataset: {_name(node)}.")
    if isinstance(node, _MULTI_INPUT):
        return node._with_inputs([_shard_by_file(p, num_workers, index) for p in node._inputs()])
    if isinstance(node, _FUNC):
        inner = _func_over_tensors(node._inputs()[0])
        if inner is not None:

            def shard(target: Dataset) -> Dataset:
                return AutoShardDataset(target, num_workers, index)

            return node._with_inputs([_rebuild(node._inputs()[0], inner, shard)])
    if _is_reader_source(node):
        return _shard_input_of(node, num_workers, index)
    if not isinstance(node, _PASS_THROUGH + _FUNC):
        raise _NotFound(
            "Did not find a shardable source, walked to a node which is not a dataset: "
            f"{_name(node)}. {_DATA_ADVICE}"
        )
    inputs = node._inputs()
    return node._with_inputs([_shard_by_file(inputs[0], num_workers, index), *inputs[1:]])


def _shard_by_hint(node: Dataset, num_workers: int, index: int) -> Dataset:
    """Every ``shard(SHARD_HINT, i)`` replaced by ``shard(num_workers, index)``."""
    inputs = node._inputs()
    new_inputs = [_shard_by_hint(p, num_workers, index) for p in inputs]
    if isinstance(node, transforms.ShardDataset) and node._num_shards == SHARD_HINT:
        return AutoShardDataset(new_inputs[0], num_workers, index)
    if all(a is b for a, b in zip(new_inputs, inputs, strict=True)):
        return node
    return node._with_inputs(new_inputs)


def auto_shard_dataset(dataset: Dataset, num_workers: int, worker_index: int) -> ShardResult:
    """Worker ``worker_index``'s pipeline, sharded by the dataset's ``auto_shard_policy``.

    The returned dataset is ``dataset`` itself when nothing is rewritten (OFF, DATA, and
    FILE or AUTO with one worker); DATA's shard is applied after the rebatch.

    Args:
        dataset: the worker's copy of the pipeline (of global batches).
        num_workers: workers in the cluster.
        worker_index: this worker.

    Returns:
        A :class:`ShardResult`: the pipeline and the applied policy (FILE, DATA, OFF, HINT).

    Raises:
        NotFoundError: FILE policy on a pipeline with no file source to shard.
    """
    policy = dataset.options().experimental_distribute.auto_shard_policy
    if policy in (AutoShardPolicy.OFF, AutoShardPolicy.DATA):
        return ShardResult(dataset, policy)
    if policy == AutoShardPolicy.HINT:
        return ShardResult(_shard_by_hint(dataset, num_workers, worker_index), policy)
    if policy == AutoShardPolicy.FILE:
        if num_workers == 1:
            return ShardResult(dataset, policy)
        try:
            return ShardResult(_shard_by_file(dataset, num_workers, worker_index), policy)
        except _NotFound as exc:
            raise errors.NotFoundError(str(exc)) from None
    try:
        sharded = _shard_by_file(dataset, num_workers, worker_index)
    except _NotFound as exc:
        if num_workers > 1:
            _log.warning(
                "AUTO sharding policy will apply DATA sharding policy as it failed to apply "
                "FILE sharding policy because of the following reason: %s",
                exc,
            )
        return ShardResult(dataset, AutoShardPolicy.DATA)
    return ShardResult(sharded if num_workers > 1 else dataset, AutoShardPolicy.FILE)
