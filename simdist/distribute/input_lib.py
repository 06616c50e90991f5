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

Each step of a :class:`DistributedIterator` is a ``PerReplica`` structure (a plain one with a
single replica on a single worker, as TF) whose components are Tensors on the replicas'
devices (on their host CPU with ``experimental_fetch_to_device=False``).

**End of data** (TF's partial-batch handling, tensorflow/python/distribute/input_lib.py): a
step is produced while at least one replica gets data; replicas whose input has run out
get an *empty* batch shaped from the element spec (leading and unknown dimensions 0). TF
skips this handling when the per-replica spec is fully static on a single worker, or the
input is infinite: there, a step where any replica lacks data ends the iteration.
``get_next_as_optional`` always handles partial batches (unless the input is infinite).
With several workers the decision "does any replica have data" is global; pass
``has_value_reducer`` (an all-reduce SUM over workers of the local count) to get it.

Values are produced on demand, in the calling thread: TF's prefetching (a ``prefetch`` of
``num_replicas_in_sync`` elements, per-device buffers) changes no value, so simdist runs no
background threads and results never depend on scheduling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from simdist import errors
from simdist.core import check_hook, nest
from simdist.core.context import state
from simdist.core.device import canonical_name
from simdist.core.device import device as device_scope
from simdist.core.function import InputSignatureError
from simdist.core.tensor_spec import TensorSpec
from simdist.core.trackable import Trackable
from simdist.data import structure
from simdist.data.dataset import INFINITE, Dataset
from simdist.data.iterator import Optional
from simdist.data.iterator_state import ITERATOR_STATE, Position
from simdist.data.options import AutoShardPolicy
from simdist.distribute import auto_shard, rebatch
from simdist.distribute.input_context import (
    InputContext,
    InputOptions,
    InputReplicationMode,
    ValueContext,
    validate_input_options,
)
from simdist.distribute.values import PerReplica

__all__ = [
    "DistributedDataset",
    "DistributedDatasetsFromFunction",
    "DistributedIterator",
    "PerReplicaSpec",
    "distribute_values_from_function",
    "pack_per_replica",
]


class PerReplicaSpec:
    """The type of a ``PerReplica`` value: one spec per replica (``values.PerReplicaSpec``)."""

    def __init__(self, *value_specs: TensorSpec) -> None:
        self._value_specs = tuple(value_specs)

    @property
    def value_specs(self) -> tuple:
        return self._value_specs

    def __eq__(self, other) -> bool:
        if not isinstance(other, PerReplicaSpec):
            return NotImplemented
        return self._value_specs == other._value_specs

    def __hash__(self) -> int:
        return hash(self._value_specs)

    def __repr__(self) -> str:
        return f"PerReplicaSpec({', '.join(repr(s) for s in self._value_specs)})"

    def _fit_value(self, value: Any, fit: Callable[[Any, Any], Any]) -> PerReplica:
        """``tf.function(input_signature=[dist_dataset.element_spec])``: check that ``value``
        is a ``PerReplica`` with one component per spec, each fitted by ``fit(component,
        spec)``; returns the fitted ``PerReplica``.

        Raises:
            InputSignatureError: not a ``PerReplica``, or another number of components.
        """
        if not isinstance(value, PerReplica):
            raise InputSignatureError(
                f"Python inputs incompatible with input_signature: {self!r} expects a "
                f"PerReplica value (an element of the distributed dataset), got "
                f"{type(value).__name__}."
            )
        if len(value.values) != len(self._value_specs):
            raise InputSignatureError(
                f"Python inputs incompatible with input_signature: {self!r} has "
                f"{len(self._value_specs)} replicas, the value {len(value.values)}."
            )
        return PerReplica(
            [fit(v, spec) for v, spec in zip(value.values, self._value_specs, strict=True)]
        )


def pack_per_replica(values: list, always_wrap: bool) -> Any:
    """One structure whose leaves are ``PerReplica`` of the replicas' leaves.

    Unlike ``values.regroup`` every leaf is wrapped, even one that is the same object on
    every replica (``value_fn`` returning ``ctx.num_replicas_in_sync`` gives ``(2, 2)``, as
    TF). With ``always_wrap=False`` and one replica, the structure itself is returned.

    Raises:
        ValueError: the replicas' structures differ.
    """
    if len(values) == 1 and not always_wrap:
        return values[0]
    first = values[0]
    for r, other in enumerate(values[1:], start=1):
        try:
            nest.assert_same_structure(first, other)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Replica 0 and replica {r} produced different structures ({exc}); every "
                "replica's value must have the same structure."
            ) from None
    flats = [nest.flatten(v) for v in values]
    leaves = [PerReplica(parts) for parts in zip(*flats, strict=True)]
    return nest.pack_sequence_as(first, leaves)


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


class DistributedIterator(Trackable):
    """Steps of a distributed dataset (``tf.distribute.DistributedIterator``).

    Thread-safe: concurrent ``get_next`` calls each receive a distinct step, in order.
    Trackable: ``tf.train.Checkpoint(iterator=it)`` saves how many steps it has given and
    restores the next step exactly (``simdist.data.iterator_state``).
    """

    def __init__(self, pull: Callable[[], list], owner) -> None:
        self._pull = pull  # () -> one element (NumPy) or None per local replica
        self._owner = owner
        self._lock = threading.Lock()
        self._position = Position(owner._pipelines(), self._kind())

    def _kind(self) -> str:
        return f"DistributedIterator/{len(self._owner._devices)} replicas"

    # --- the trackable protocol: the input position (simdist.data.iterator_state) --------
    def _serialize_to_tensors(self) -> dict:
        with self._lock:
            return {ITERATOR_STATE: self._position.state()}

    def _validate_restore(self, tensors: dict) -> None:
        self._position.check(tensors[ITERATOR_STATE])

    def _restore_from_tensors(self, tensors: dict) -> None:
        with self._lock:
            position = Position(self._owner._pipelines(), self._kind())
            document = position.check(tensors[ITERATOR_STATE])
            pull = self._owner._make_pull()
            position.replay(document, pull)
            self._pull, self._position = pull, position

    @property
    def element_spec(self) -> Any:
        """The spec of one step (``PerReplicaSpec`` leaves with several replicas)."""
        return self._owner.element_spec

    def __iter__(self) -> DistributedIterator:
        return self

    def __next__(self) -> Any:
        try:
            return self.get_next()
        except errors.OutOfRangeError:
            raise StopIteration from None

    def next(self) -> Any:
        return self.__next__()

    def get_next(self, name: str | None = None) -> Any:
        """The next step: one batch per replica.

        Raises:
            OutOfRangeError: no replica has data left ("End of sequence").
            ValueError: called inside a replica function.
        """
        if state.replica_context is not None:
            raise ValueError(
                "next(iterator) should be called from outside of replica_fn. e.g. "
                "strategy.run(replica_fn, args=(next(iterator),))"
            )
        step = self._next_step(self._owner._partial_batches)
        if step is None:
            raise errors.OutOfRangeError("End of sequence")
        return step

    def get_next_as_optional(self) -> Optional:
        """The next step wrapped in an ``Optional``, empty at the end."""
        step = self._next_step(self._owner._cardinality != INFINITE)
        return Optional(step, step is not None)

    def _next_step(self, partial: bool) -> Any:
        with self._lock:
            local = self._position.pull(self._pull)
        owner = self._owner
        count = sum(v is not None for v in local)
        total = owner._has_value_reducer(count) if owner._has_value_reducer else count
        if total == 0 or (not partial and count < len(local)):
            return None
        per_replica = []
        for value, device in zip(local, owner._value_devices, strict=True):
            element = rebatch.empty_element(owner._replica_spec) if value is None else value
            per_replica.append(structure.to_tensors(element, device))
        return pack_per_replica(per_replica, owner._always_wrap)

    def __repr__(self) -> str:
        return f"<DistributedIterator element_spec={self.element_spec}>"


def _round_robin(streams: list[Iterator], num_replicas: int) -> Callable[[], list]:
    """Pull one step: with one stream per worker, consecutive elements go to replicas in
    order (the first replica that finds the stream ended ends the worker's step); with one
    stream per replica, each replica reads its own."""

    def pull() -> list:
        if len(streams) > 1:
            return [next(s, None) for s in streams]
        out: list = []
        for _ in range(num_replicas):
            ended = bool(out) and out[-1] is None
            out.append(None if ended else next(streams[0], None))
        return out

    return pull


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
        check_hook.note("distribute_dataset", policy=self._auto_shard_policy, workers=num_workers)

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
        return _round_robin([source], len(self._devices))


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
        return _round_robin(streams, len(self._devices))


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
