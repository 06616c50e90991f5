"""Distributed input: datasets whose elements hold one batch per replica, and their iterators.

The strategy methods call into this module:

* ``experimental_distribute_dataset(dataset)`` -> :class:`DistributedDataset`: every global
  batch of ``dataset`` is split over the replicas in sync by TF's rules
  (``simdist.distribute.rebatch``); consecutive per-replica batches go to replicas 0, 1, ...
* ``distribute_datasets_from_function(dataset_fn)`` -> :class:`DistributedDatasetsFromFunction`:
  ``dataset_fn(InputContext)`` is called once per input pipeline (per worker, or per replica
  with ``InputReplicationMode.PER_REPLICA``) and must yield per-replica batches; consecutive
  elements go to the worker's replicas in replica order.
* ``experimental_distribute_values_from_function(value_fn)`` ->
  :func:`distribute_values_from_function`.

Each step is a ``PerReplica`` structure; how steps are made, and what happens at the end of
data, is :mod:`simdist.distribute.distributed_iterator`.

Values are produced on demand, in the calling thread: TF's prefetching (a ``prefetch`` of
``num_replicas_in_sync`` elements, per-device buffers) changes no value, so simdist runs no
background threads and results never depend on scheduling.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simdist.core import nest, step_hooks
from simdist.core.device import canonical_name
from simdist.core.device import device as device_scope
from simdist.core.tensor_spec import TensorSpec
from simdist.data.dataset import INFINITE, Dataset
from simdist.data.options import AutoShardPolicy
from simdist.distribute import auto_shard, rebatch
from simdist.distribute.distributed_iterator import (
    DistributedIterator,
    PerReplicaSpec,
    pack_per_replica,
    round_robin,
)
from simdist.distribute.input_context import (
    InputContext,
    InputOptions,
    InputReplicationMode,
    ValueContext,
    validate_input_options,
)

__all__ = [
    "DistributedDataset",
    "DistributedDatasetsFromFunction",
    "DistributedIterator",
    "PerReplicaSpec",
    "distribute_values_from_function",
    "pack_per_replica",
]


def _check_devices(devices) -> tuple[str, ...]:
    if isinstance(devices, str) or not devices:
        raise ValueError(
            f"`devices` must be a non-empty sequence of device names, got {devices!r}."
        )
    return tuple(canonical_name(d) for d in devices)


def _check_workers(num_workers: int, worker_index: int) -> None:
    if num_workers < 1 or not 0 <= worker_index < num_workers:
        raise ValueError(
            f"`worker_index` must be in [0, num_workers); got worker_index={worker_index}, "
            f"num_workers={num_workers}."
        )


def _host(device: str) -> str:
    return canonical_name("CPU:0", device)


def _is_static(spec: Any) -> bool:
    return all(s.shape.is_fully_defined() for s in nest.flatten(spec))


def _dynamic_batch(spec: Any) -> Any:
    def relax(s: TensorSpec) -> TensorSpec:
        if not s.shape.rank:
            return s
        return TensorSpec([None, *s.shape[1:]], s.dtype)

    return nest.map_structure(relax, spec)


class _DistributedInput:
    """What both distributed datasets share: devices, wrapping, specs and partial batches."""

    def __init__(self, devices, options, num_workers: int, worker_index: int, reducer) -> None:
        self._devices = _check_devices(devices)
        _check_workers(num_workers, worker_index)
        self._options: InputOptions = options
        self._num_workers = num_workers
        self._worker_index = worker_index
        self._has_value_reducer = reducer
        self._always_wrap = num_workers > 1 or len(self._devices) > 1
        per_replica_mode = options.experimental_replication_mode == InputReplicationMode.PER_REPLICA
        on_device = options.experimental_fetch_to_device or (
            per_replica_mode and options.experimental_place_dataset_on_device
        )
        self._value_devices = tuple(d if on_device else _host(d) for d in self._devices)

    def _finish_spec(self, replica_spec: Any, cardinality: int) -> None:
        static = _is_static(replica_spec)
        self._cardinality = cardinality
        self._partial_batches = cardinality != INFINITE and (not static or self._num_workers > 1)
        self._replica_spec = replica_spec
        shown = replica_spec
        if self._num_workers > 1 and self._partial_batches:
            shown = _dynamic_batch(replica_spec)
        if self._always_wrap:
            n = len(self._devices)
            shown = nest.map_structure(lambda s: PerReplicaSpec(*([s] * n)), shown)
        self._element_spec = shown

    @property
    def element_spec(self) -> Any:
        """The spec of one step: ``PerReplicaSpec`` leaves, plain specs with one replica."""
        return self._element_spec

    def __iter__(self) -> DistributedIterator:
        return DistributedIterator(self._make_pull(), self)

    def _make_pull(self) -> Callable[[], list]:
        raise NotImplementedError

    def _pipelines(self) -> list[Dataset]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} element_spec={self.element_spec}>"


class DistributedDataset(_DistributedInput):
    """A dataset of global batches split over replicas (``tf.distribute.DistributedDataset``).

    Args:
        dataset: a ``tf.data.Dataset`` of global batches (``dataset.batch(global_size)``).
        devices: this worker's replica devices, in replica order.
        options: ``tf.distribute.InputOptions`` (validated; ``PER_REPLICA`` is refused).
        num_workers: workers in the cluster; the dataset is auto-sharded by its
            ``experimental_distribute.auto_shard_policy`` (``simdist.distribute.auto_shard``).
        worker_index: this worker's index.
        has_value_reducer: with several workers, ``count -> global count`` (all-reduce SUM).

    Raises:
        TypeError: ``dataset`` is not a Dataset.
        ValueError: the dataset is not batched and there are several replicas.
        NotFoundError: policy FILE with several workers on a pipeline without files.

    >>> import simdist as tf
    >>> dist = DistributedDataset(tf.data.Dataset.range(4).batch(2), ("GPU:0", "GPU:1"))
    >>> [[t.numpy().tolist() for t in step.values] for step in dist]
    [[[0], [1]], [[2], [3]]]
    """

    def __init__(
        self,
        dataset: Dataset,
        devices,
        options: InputOptions | None = None,
        num_workers: int = 1,
        worker_index: int = 0,
        has_value_reducer: Callable[[int], int] | None = None,
    ) -> None:
        if not isinstance(dataset, Dataset):
            raise TypeError(
                "experimental_distribute_dataset takes a tf.data.Dataset, got "
                f"{type(dataset).__name__}."
            )
        options = validate_input_options(options, from_function=False)
        super().__init__(devices, options, num_workers, worker_index, has_value_reducer)
        # Each worker builds its own pipeline (fresh shuffle state), as TF clones it, and
        # auto-shards it (FILE/HINT rewrite here; DATA's shard follows the rebatch).
        own = dataset if num_workers == 1 else dataset._copy_graph()
        self._dataset, self._auto_shard_policy = auto_shard.auto_shard_dataset(
            own, num_workers, worker_index
        )
        self._plan, replica_spec = rebatch.plan_rebatch(
            self._dataset,
            len(self._devices),
            num_workers,
            worker_index,
            policy=self._auto_shard_policy,
        )
        self._finish_spec(replica_spec, dataset._cardinality())
        step_hooks.note("distribute_dataset", policy=self._auto_shard_policy, workers=num_workers)

    @property
    def auto_shard_policy(self) -> AutoShardPolicy:
        """The policy applied on this worker: FILE, DATA, OFF or HINT (AUTO resolved)."""
        return self._auto_shard_policy

    def _pipelines(self) -> list[Dataset]:
        return [self._dataset]

    def _make_pull(self) -> Callable[[], list]:
        source = self._dataset._iterate()
        if self._plan is not None:
            source = self._plan.stream(source, self._replica_spec)
        return round_robin([source], len(self._devices))


class DistributedDatasetsFromFunction(_DistributedInput):
    """Datasets made by ``dataset_fn`` per input pipeline, feeding the replicas.

    Args:
        dataset_fn: ``InputContext -> tf.data.Dataset`` of per-replica batches.
        devices: this worker's replica devices, in replica order.
        options: ``tf.distribute.InputOptions``; ``PER_REPLICA`` calls ``dataset_fn`` once
            per replica (``input_pipeline_id`` = replica index), on one worker only.
        num_workers: workers in the cluster (``num_input_pipelines``).
        worker_index: this worker's index (``input_pipeline_id``).
        has_value_reducer: with several workers, ``count -> global count`` (all-reduce SUM).

    Raises:
        TypeError: ``dataset_fn`` does not return a Dataset.
        NotImplementedError: ``PER_REPLICA`` with several workers (as TF).
    """

    def __init__(
        self,
        dataset_fn: Callable[[InputContext], Dataset],
        devices,
        options: InputOptions | None = None,
        num_workers: int = 1,
        worker_index: int = 0,
        has_value_reducer: Callable[[int], int] | None = None,
    ) -> None:
        options = validate_input_options(options, from_function=True)
        super().__init__(devices, options, num_workers, worker_index, has_value_reducer)
        n = len(self._devices)
        if options.experimental_replication_mode == InputReplicationMode.PER_REPLICA:
            if num_workers > 1:
                raise NotImplementedError(
                    "InputReplicationMode.PER_REPLICA is only supported in "
                    "`experimental_distribute_datasets_from_function` of "
                    "tf.distribute.MirroredStrategy"
                )
            on_device = options.experimental_place_dataset_on_device
            places = [d if on_device else _host(d) for d in self._devices]
            contexts = [InputContext(n, i, n) for i in range(n)]
        else:
            places = [_host(self._devices[0])]
            contexts = [InputContext(num_workers, worker_index, n * num_workers)]
        self._datasets = []
        for place, ctx in zip(places, contexts, strict=True):
            with device_scope(place):
                dataset = dataset_fn(ctx)
            if not isinstance(dataset, Dataset):
                raise TypeError(
                    "The function passed to distribute_datasets_from_function must return a "
                    f"tf.data.Dataset, got {type(dataset).__name__}."
                )
            self._datasets.append(dataset)
        last = self._datasets[-1]
        self._finish_spec(last.element_spec, last._cardinality())

    def _pipelines(self) -> list[Dataset]:
        return list(self._datasets)

    def _make_pull(self) -> Callable[[], list]:
        streams = [d._iterate() for d in self._datasets]
        return round_robin(streams, len(self._devices))


def distribute_values_from_function(
    value_fn: Callable[[ValueContext], Any],
    devices,
    num_workers: int = 1,
    worker_index: int = 0,
    always_wrap: bool = True,
) -> Any:
    """``value_fn(ValueContext(replica_id, num_replicas))`` for each replica, as one value.

    Each call runs under its replica's device scope; replica ids count across workers
    (``worker_index * len(devices) + i``). Every leaf becomes a ``PerReplica`` (TF's
    MirroredStrategy wraps even with one device; a one-device strategy passes
    ``always_wrap=False`` to get the value itself).

    >>> def num_replicas(ctx):
    ...     return ctx.num_replicas_in_sync
    >>> v = distribute_values_from_function(num_replicas, ("GPU:0", "GPU:1"))
    >>> v.values
    (2, 2)

    Raises:
        ValueError: the replicas' values have different structures.
        TypeError: ``value_fn`` is not callable.
    """
    if not callable(value_fn):
        raise TypeError(
            f"distribute_values_from_function needs a callable value_fn(ctx) that returns this "
            f"replica's value, got {value_fn!r}; e.g. lambda ctx: ctx.replica_id_in_sync_group."
        )
    devices = _check_devices(devices)
    _check_workers(num_workers, worker_index)
    total = len(devices) * num_workers
    results = []
    for i, device in enumerate(devices):
        with device_scope(device):
            results.append(value_fn(ValueContext(worker_index * len(devices) + i, total)))
    return pack_per_replica(results, always_wrap)
