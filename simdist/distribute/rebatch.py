"""Splitting global batches into per-replica batches, by TF's rebatch and auto-shard rules.

``experimental_distribute_dataset`` turns a stream of *global* batches into a stream of
*per-replica* batches (consecutive per-replica batches go to replicas 0, 1, ... in turn).
TF does it with one of two kernels (tensorflow/core/kernels/data/experimental/
rebatch_dataset_op.cc), and this module restates both on NumPy elements:

* **by batch sizes** (``RebatchDatasetV2``; :func:`rebatch_by_sizes`): as if the input were
  unbatched and batched again with sizes cycling through ``batch_sizes``, which
  :func:`batch_sizes_for_worker` derives from the *declared* global batch size ``G`` over
  ``N`` replicas: ``G % N`` batches of ``ceil(G/N)`` then batches of ``floor(G/N)``
  (7 over 4 -> ``[2, 2, 2, 1]``; 3 over 4 -> ``[1, 1, 1, 0]``). When the input ends, the
  batch being built is emitted if it holds anything and the stream ends; a size of 0 gives
  an empty batch. Used when the declared size is known (:func:`compute_batch_size`) and no
  data sharding is applied.
* **by splitting each batch** (legacy ``RebatchDataset``; :func:`split_each_batch`): each
  input batch of *actual* size ``b`` becomes exactly ``N`` slices of ``ceil(b/N)`` elements,
  the last ones shorter or empty (6 over 4 -> 2, 2, 2, 0; a final batch of 3 over 4 ->
  1, 1, 1, 0). Used when the batch size is unknown, and whenever the auto-shard policy
  shards by data.

Which one applies (tensorflow/python/distribute/input_lib.py, ``_make_rebatch_fn``;
tensorflow/core/grappler/optimizers/data/auto_shard.cc, ``ShardByData`` and
``RewriteRebatchV2ToV1``) depends on the auto-shard policy *applied* to the worker's
pipeline (``simdist.distribute.auto_shard``; TF auto-shards even with one worker, unless
the policy is OFF). DATA (and AUTO on a pipeline with no file to shard) rewrites the
by-sizes kernel into the split-each-batch one over all ``num_replicas_in_sync`` replicas
and keeps every ``num_workers``-th slice starting at ``worker_index`` (so worker ``w``'s
local replica ``r`` gets slice ``w + r * num_workers`` of each global batch). OFF, FILE and
HINT keep the by-sizes kernel, with worker ``w``'s sizes (the worker reads its own files,
or everything). With the default policy (AUTO) on in-memory data, even single-worker
distribution therefore splits each batch.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import nest
from simdist.core.shape import TensorShape
from simdist.core.sparse import SparseTensorSpec
from simdist.core.tensor_spec import TensorSpec
from simdist.data import batching, functional, shuffle, structure, transforms
from simdist.data.dataset import Dataset
from simdist.data.options import AutoShardPolicy
from simdist.distribute import auto_shard

_log = logging.getLogger("simdist")

__all__ = [
    "RebatchPlan",
    "batch_sizes_for_worker",
    "check_batched",
    "compute_batch_size",
    "empty_element",
    "plan_rebatch",
    "rebatch_by_sizes",
    "split_each_batch",
]

UNKNOWN_BATCH = -1

_BATCH_NODES = (batching.BatchDataset, batching.PaddedBatchDataset)
_MULTI_INPUT_NODES = (transforms.ZipDataset, transforms.ConcatenateDataset)
# Nodes that never change the leading dimension of an element (TF's ComputeBatchSize list;
# simdist adds with_options, which changes no element).
_PASS_THROUGH_NODES = (
    transforms.CacheDataset,
    functional.FilterDataset,
    transforms.PrefetchDataset,
    transforms.RepeatDataset,
    transforms.ShardDataset,
    shuffle.ShuffleDataset,
    transforms.SkipDataset,
    transforms.TakeDataset,
    transforms.OptionsDataset,
    auto_shard.AutoShardDataset,
)


def batch_sizes_for_worker(
    global_batch_size: int, num_workers: int, num_replicas_per_worker: int, worker_index: int
) -> list[int]:
    """The per-replica batch sizes worker ``worker_index`` cycles through.

    The ``W * R`` sizes add up to ``global_batch_size``, differ by at most one, and worker
    ``w``'s list is worker 0's rotated left by ``w * R`` (TF's ``batch_sizes_for_worker``).

    >>> batch_sizes_for_worker(7, 1, 4, 0)
    [2, 2, 2, 1]
    >>> batch_sizes_for_worker(7, 2, 2, 1)
    [2, 1, 2, 2]
    """
    num_subbatches = num_workers * num_replicas_per_worker
    floor = global_batch_size // num_subbatches
    num_ceil = global_batch_size - num_subbatches * floor
    worker_0 = [floor + 1] * num_ceil + [floor] * (num_subbatches - num_ceil)
    offset = worker_index * num_replicas_per_worker
    return worker_0[offset:] + worker_0[:offset]


def _leading_dim(spec: TensorSpec) -> int | None:
    if not spec.shape.rank:  # unknown rank or a scalar
        return None
    return spec.shape[0]


def compute_batch_size(dataset: Dataset) -> int:
    """The declared batch size of ``dataset``, or -1 when it cannot be known statically.

    As TF's ``compute_batch_size``: the leading dimension of the element spec when every
    component has the same known one; otherwise the ``batch_size`` of the batching node
    reached by walking up through nodes that keep the leading dimension (zip/concatenate
    need the same size on every input).
    """
    dims = [_leading_dim(s) for s in nest.flatten(dataset.element_spec)]
    if dims and all(d is not None for d in dims):
        return dims[0] if all(d == dims[0] for d in dims) else UNKNOWN_BATCH
    return _batch_size_of_node(dataset)


def _batch_size_of_node(node: Dataset) -> int:
    if isinstance(node, _BATCH_NODES):
        return node._batch_size
    if isinstance(node, _MULTI_INPUT_NODES):
        sizes = [_batch_size_of_node(parent) for parent in node._inputs()]
        return sizes[0] if all(s == sizes[0] for s in sizes) else UNKNOWN_BATCH
    if isinstance(node, _PASS_THROUGH_NODES):
        return _batch_size_of_node(node._inputs()[0])
    return UNKNOWN_BATCH


def _nodes(dataset: Dataset) -> Iterator[Dataset]:
    """Every node of the pipeline (depth first, inputs in order)."""
    stack = [dataset]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node._inputs()))


def check_batched(dataset: Dataset, num_replicas_in_sync: int) -> None:
    """Refuse what TF refuses, and warn where TF would split something that may not be a batch.

    TF splits the leading dimension of whatever it is given and fails only on scalars;
    simdist does the same. A pipeline with no ``batch``/``padded_batch`` step at all (vectors
    from a generator or ``from_tensor_slices``) is split too, as in TF 2.21, with a warning:
    its leading dimension is often not the batch the user meant.

    Raises:
        ValueError: a component of the elements is a scalar (nothing to split).
        UnimplementedError: a component is a ``SparseTensor`` (simdist does not split those).
    """
    specs = nest.flatten(dataset.element_spec)
    sparse = [i for i, s in enumerate(specs) if isinstance(s, SparseTensorSpec)]
    if sparse:
        raise errors.UnimplementedError(
            f"simdist cannot split SparseTensor components (component(s) {sparse}) across "
            f"{num_replicas_in_sync} replicas: make them dense in a map first "
            "(tf.sparse.to_dense), or use strategy.distribute_datasets_from_function."
        )
    scalars = [i for i, s in enumerate(specs) if s.shape.rank == 0]
    if scalars:
        raise ValueError(
            "Call the `batch` method on the input Dataset in order to be able to split your "
            f"input across {num_replicas_in_sync} replicas: component(s) {scalars} of its "
            "elements are scalars. Batch it with the global batch size first "
            "(dataset.batch(global_batch_size)); each replica then gets its share of every "
            "global batch. If the elements already are batches (built with from_tensors or a "
            "generator), use strategy.distribute_datasets_from_function, which hands elements "
            "to replicas as they are."
        )
    if not any(isinstance(node, _BATCH_NODES) for node in _nodes(dataset)):
        _log.warning(
            "The dataset distributed over %d replicas has no `batch` or `padded_batch` step: "
            "the leading dimension of each element (shapes %s) is split across the replicas, "
            "as TF does. If that dimension is not a batch, batch the dataset with the global "
            "batch size first.",
            num_replicas_in_sync,
            [tuple(s.shape) if s.shape.rank is not None else None for s in specs],
        )


class RebatchPlan:
    """How one worker's pipeline is rebatched and sharded (see the module docstring).

    Attributes:
        batch_sizes: the cycle of sizes (by-sizes kernel), or None to split each batch.
        num_splits: slices per input batch when splitting each batch.
        shard: ``(num_shards, index)`` applied to the rebatched stream, or None.
    """

    def __init__(self, batch_sizes: list[int] | None, num_splits: int, shard) -> None:
        self.batch_sizes = batch_sizes
        self.num_splits = num_splits
        self.shard = shard

    def stream(self, source: Iterator, spec: Any) -> Iterator:
        """The rebatched (and sharded) stream of per-replica batches from ``source``."""
        if self.batch_sizes is not None:
            out = rebatch_by_sizes(source, self.batch_sizes, spec)
        else:
            out = split_each_batch(source, self.num_splits)
        if self.shard is not None:
            out = auto_shard.shard_stream(out, *self.shard)
        return out


def plan_rebatch(
    dataset: Dataset,
    num_replicas_per_worker: int,
    num_workers: int,
    worker_index: int,
    policy: AutoShardPolicy | None = None,
) -> tuple[RebatchPlan | None, Any]:
    """Decide how ``dataset`` is rebatched on worker ``worker_index``; return the plan and
    the per-replica element spec.

    Args:
        dataset: the worker's pipeline of global batches (after FILE/HINT sharding).
        num_replicas_per_worker: the worker's local replicas.
        num_workers: workers in the cluster.
        worker_index: this worker.
        policy: the auto-shard policy applied to the pipeline (never AUTO); None works it
            out with ``auto_shard.auto_shard_dataset``.

    Returns ``(None, spec)`` when there is a single replica in sync (nothing to split).

    Raises:
        ValueError: the dataset is not batched (:func:`check_batched`).
        NotFoundError: ``policy`` is None and FILE finds no file to shard.
    """
    spec = dataset.element_spec
    total = num_replicas_per_worker * num_workers
    if total == 1:
        return None, spec
    check_batched(dataset, total)
    batch_size = compute_batch_size(dataset)
    sizes = (
        batch_sizes_for_worker(batch_size, num_workers, num_replicas_per_worker, worker_index)
        if batch_size != UNKNOWN_BATCH
        else None
    )
    per_replica_spec = _rebatched_spec(spec, sizes, total)
    if policy is None or policy == AutoShardPolicy.AUTO:
        policy = auto_shard.auto_shard_dataset(dataset, num_workers, worker_index).policy
    if policy == AutoShardPolicy.DATA:
        return RebatchPlan(None, total, (num_workers, worker_index)), per_replica_spec
    return RebatchPlan(sizes, total, None), per_replica_spec


def _rebatched_spec(spec: Any, sizes: list[int] | None, total: int) -> Any:
    """TF's Python-side spec: by-sizes when the size is known, else split-each-batch."""
    if sizes is not None:
        new_dim = sizes[0] if all(s == sizes[0] for s in sizes) else None
        if new_dim is not None:
            known = [d for d in map(_leading_dim, nest.flatten(spec)) if d is not None]
            if not known or known[0] % new_dim != 0:
                new_dim = None  # partial batches may form
        return nest.map_structure(lambda s: _with_leading(s, new_dim), spec)

    def legacy(s: TensorSpec) -> TensorSpec:
        dim = _leading_dim(s)
        return _with_leading(s, dim // total if dim is not None and dim % total == 0 else None)

    return nest.map_structure(legacy, spec)


def _with_leading(spec: TensorSpec, dim: int | None) -> TensorSpec:
    if spec.shape.rank is None:
        return TensorSpec(None, spec.dtype)
    return TensorSpec(TensorShape([dim]).concatenate(spec.shape[1:]), spec.dtype)


def empty_element(spec: Any) -> Any:
    """An element of ``spec`` with batch size 0 (other unknown dimensions also 0).

    As TF's dummy values for replicas that get no data: a leading dimension of 0, and 0 for
    every dimension the spec leaves unknown.
    """

    def make(s: TensorSpec) -> np.ndarray:
        dtype = s.dtype.as_numpy_dtype
        if s.shape.rank is None:
            return np.zeros((0,), dtype=dtype)
        dims = [0 if d is None else d for d in s.shape]
        if dims:
            dims[0] = 0
        return np.zeros(tuple(dims), dtype=dtype)

    return nest.map_structure(make, spec)


def _check_components(flat: list) -> int:
    for i, component in enumerate(flat):
        if component.ndim == 0:
            raise errors.InvalidArgumentError(
                "Cannot rebatch dataset: All components must have at least one dimension. "
                f"Perhaps your input dataset is not batched? Component {i} is scalar."
            )
    sizes = [c.shape[0] for c in flat]
    if any(s != sizes[0] for s in sizes):
        raise errors.InvalidArgumentError(
            "Input element must have the same batch size in each component. Component 0 "
            f"had size {sizes[0]} but the components had sizes {sizes}."
        )
    return sizes[0]


def rebatch_by_sizes(source: Iterator, batch_sizes: list[int], spec: Any) -> Iterator:
    """Re-cut a stream of batches into batches of sizes cycling through ``batch_sizes``.

    Batches may take rows from several input batches. When the input ends, a non-empty
    batch in progress is emitted and the stream ends; a size of 0 yields an empty batch
    (shaped from ``spec``) without reading the input.

    >>> batches = iter([np.arange(7), np.arange(7, 10)])
    >>> [b.tolist() for b in rebatch_by_sizes(batches, [2, 2, 2, 1], None)]
    [[0, 1], [2, 3], [4, 5], [6], [7, 8], [9]]
    """
    template = None
    current: list | None = None
    offset = 0
    index = 0
    ended = False
    while not ended:
        desired = batch_sizes[index]
        index = (index + 1) % len(batch_sizes)
        pieces: list[list] = []
        size = 0
        while size < desired:
            if current is None:
                try:
                    element = next(source)
                except StopIteration:
                    ended = True
                    break
                current = structure.flatten(element)
                template = element
                _check_components(current)
                offset = 0
            end = min(offset + desired - size, current[0].shape[0])
            pieces.append([c[offset:end] for c in current])
            size += end - offset
            offset = end
            if offset == current[0].shape[0]:
                current = None
        if size == 0 and desired > 0:
            return
        if desired == 0:
            yield empty_element(spec)
        elif len(pieces) == 1:
            yield structure.pack(template, pieces[0])
        else:
            columns = zip(*pieces, strict=True)
            yield structure.pack(template, [np.concatenate(col) for col in columns])


def split_each_batch(source: Iterator, num_splits: int) -> Iterator:
    """Cut every input batch into exactly ``num_splits`` slices of ``ceil(b / num_splits)``.

    The last slices of a batch are shorter or empty; each component is cut by its own size.

    >>> [b.tolist() for b in split_each_batch(iter([np.arange(6)]), 4)]
    [[0, 1], [2, 3], [4, 5], []]
    """
    for element in source:
        flat = structure.flatten(element)
        if any(c.ndim == 0 for c in flat):
            _check_components(flat)  # raises TF's error for a scalar component
        steps = [-(-c.shape[0] // num_splits) for c in flat]
        for k in range(num_splits):
            leaves = [c[k * s : (k + 1) * s] for c, s in zip(flat, steps, strict=True)]
            yield structure.pack(element, leaves)
