"""``TPUStrategy``: synchronous training on the cores of a simulated Cloud TPU slice.

Replicas are the slice's TPU devices (:mod:`simdist.distribute.cluster_resolver.tpu`), host
by host; variables are mirrored on every device (``TPUMirroredVariable``); gradients are
summed by a ring per torus dimension over the replicas laid out as the slice's chips (x, y[,
z]) times devices per chip. What makes TPU code differ from GPU code, kept here as TF has it:

* **Initialization first.** The TPU system must be initialized for the strategy's resolver
  (``tf.tpu.experimental.initialize_tpu_system``); otherwise ``FailedPreconditionError``.
* **No pure eager execution.** ``run`` raises TF's ``NotImplementedError`` unless it is called
  inside a ``tf.function`` or ``fn`` is one.
* **One compiled program for every replica.** Inputs of a step must have the same rank and
  dtype on every replica. Shapes: with ``RunOptions(experimental_enable_dynamic_batch_size=
  True)`` (TF's default) TF pads replicas with fewer rows (a partial final batch, or an
  empty one) so any shapes run; with ``False``, every replica's inputs must have the same
  shape, and a partial final batch that splits unevenly raises TF's run-time
  ``InvalidArgumentError`` ("Run-time shape mismatch for TPUExecute argument...").
  ``drop_remainder=True`` (static batches) avoids it. Distributing a dataset never raises.
* **Identical shapes to gather.** ``gather`` and ``ReplicaContext.all_gather`` need the same
  shape on every replica (the API page: TPUStrategy.gather is stricter than the others).
* **Host order.** The order in which hosts deliver data is not guaranteed;
  ``simdist_host_order_seed`` permutes it deterministically (:mod:`simdist.distribute.tpu_input`).

A ``tf.tpu.experimental.DeviceAssignment`` sets the replicas (its ``num_replicas``, each on the
TPU device of its logical core 0: :mod:`simdist.distribute.tpu_device_assignment`).

Not simulated: model parallelism (a replica's other logical cores compute nothing), XLA
compilation itself (ops that need static shapes on a real TPU run here), and TPU embeddings.
"""

from __future__ import annotations

import collections
import logging

import numpy as np

from simdist import collectives, errors
from simdist.collectives.forced import forced_all_reduce
from simdist.core import nest, profile_hook
from simdist.core.context import state
from simdist.core.function import Function, _BoundFunction, executing_eagerly
from simdist.core.tensor import Tensor
from simdist.distribute import tpu_system, tpu_values
from simdist.distribute.cluster_resolver.tpu import TPUClusterResolver
from simdist.distribute.cross_device_ops import CrossDeviceOps, _check_same, _mean
from simdist.distribute.cross_device_ops import reduce_arrays as _reduce_arrays
from simdist.distribute.distribute_lib import ReplicaContext
from simdist.distribute.distributed_variables import MirroredVariable
from simdist.distribute.input_context import InputReplicationMode
from simdist.distribute.mirrored_strategy import MirroredExtended
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import _replica_tensors
from simdist.distribute.tpu_device_assignment import DeviceAssignment
from simdist.distribute.values import DistributedValues

__all__ = ["TPUStrategy", "TPUStrategyV2", "TPUStrategyV1Alias", "TPUExtended", "RunOptions"]

_log = logging.getLogger("simdist")


class RunOptions(
    collections.namedtuple(
        "RunOptions",
        [
            "experimental_enable_dynamic_batch_size",
            "experimental_bucketizing_dynamic_shape",
            "experimental_xla_options",
        ],
    )
):
    """``tf.distribute.RunOptions`` (TPU only): dynamic batch sizes are allowed by default."""

    def __new__(
        cls,
        experimental_enable_dynamic_batch_size: bool = True,
        experimental_bucketizing_dynamic_shape: bool = False,
        experimental_xla_options=None,
    ):
        return super().__new__(
            cls,
            experimental_enable_dynamic_batch_size,
            experimental_bucketizing_dynamic_shape,
            experimental_xla_options,
        )


class TPUCrossReplicaSum(CrossDeviceOps):
    """The TPU all-reduce: a ring per torus dimension over the replicas' grid.

    ``grid`` is the slice's chip torus (dimensions of size 1 dropped) times devices per chip;
    the order of additions is ``ring_per_dimension``'s (:mod:`simdist.collectives.ring`).
    """

    _algorithm = "ring_per_dimension"

    def __init__(self, grid: tuple[int, ...]) -> None:
        self._grid = tuple(d for d in grid if d > 1)

    def reduce_arrays(self, reduce_op, arrays: list[np.ndarray]) -> np.ndarray:
        op = ReduceOp.from_value(reduce_op)
        _check_same(arrays)
        forced = forced_all_reduce()  # SIMDIST_FORCE_ALL_REDUCE wins
        if forced is not None:
            return _reduce_arrays(op, arrays, forced)
        profile_hook.record_collective("all_reduce", arrays, self._algorithm)
        if len(arrays) == 1:
            total = np.array(arrays[0], copy=True)
        else:
            total = collectives.reduce_arrays(
                "sum", list(arrays), algorithm=self._algorithm, torus_dims=self._grid
            )
        return _mean(total, len(arrays)) if op is ReduceOp.MEAN else total


class TPUExtended(MirroredExtended):
    """``strategy.extended`` of a TPUStrategy: TPU devices, TPU variables, TPU attributes."""

    def __init__(
        self,
        strategy,
        resolver: TPUClusterResolver,
        system,
        host_order_seed,
        device_assignment: DeviceAssignment | None = None,
    ) -> None:
        devices = system.devices
        grid = tuple(system.topology.mesh_shape.tolist())
        if device_assignment is not None:
            job = system.devices[0].split("/")[1].removeprefix("job:")
            devices = _assigned_devices(device_assignment, system, job)
            if devices != system.devices:  # a subset or another order: one ring over them
                grid = (len(devices),)
        super().__init__(strategy, devices, TPUCrossReplicaSum(grid))
        self._device_assignment = device_assignment
        self._tpu_cluster_resolver = resolver
        self._system = system
        self._host_order_seed = host_order_seed
        self.steps_per_run = 1
        self._require_static_shapes = True
        self.experimental_enable_get_next_as_optional = True

    @property
    def num_hosts(self) -> int:
        """Hosts of the slice; with a device assignment, the hosts its replicas use."""
        da = self._device_assignment
        if da is None:
            return self._system.slice.num_hosts
        return len({da.host_device(r) for r in range(da.num_replicas)})

    @property
    def num_replicas_per_host(self) -> int:
        """Cores per host; with a device assignment, as TF: ``min(replicas, cores per host //
        cores per replica)``."""
        da = self._device_assignment
        per_host = self._system.slice.cores_per_host
        if da is None:
            return per_host
        return min(da.num_replicas, per_host // da.num_cores_per_replica)

    @property
    def experimental_device_assignment(self) -> DeviceAssignment | None:
        return self._device_assignment

    @property
    def experimental_require_static_shapes(self) -> bool:
        """True: TPU programs are compiled for static shapes (Keras pads or drops batches)."""
        return self._require_static_shapes

    @property
    def experimental_between_graph(self) -> bool:
        return False

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    def host_devices(self, host: int) -> tuple[str, ...]:
        """Host ``host``'s replica devices, in replica order."""
        if self._device_assignment is not None:
            return tuple(d for d in self._devices if f"/task:{host}/" in d)
        per = self.num_replicas_per_host
        return self._devices[host * per : (host + 1) * per]

    def _host_ids(self) -> list[int]:
        """The hosts that run replicas (all of the slice's without a device assignment)."""
        if self._device_assignment is None:
            return list(range(self.num_hosts))
        return sorted({_task_of(d) for d in self._devices})

    def _create_distributed(self, next_creator, **kwargs):
        variable = super()._create_distributed(next_creator, **kwargs)
        cls = (
            tpu_values.TPUMirroredVariable
            if isinstance(variable, MirroredVariable)
            else tpu_values.TPUSyncOnReadVariable
        )
        tpu_variable = cls(variable._strategy, list(variable._components), variable._aggregation)
        tpu_values.track(tpu_variable)
        return tpu_variable


class _TPUReplicaContext(ReplicaContext):
    """A TPU replica: ``all_gather`` needs identical shapes on every replica."""

    def all_gather(self, value, axis: int, options=None):
        shapes = [tuple(np.shape(t)) for t in nest.flatten(value)]
        n = self.num_replicas_in_sync

        def check(per_replica: list) -> list:
            _check_identical(per_replica, "ReplicaContext.all_gather")
            return [None] * n

        self._collective("all_gather_shapes", (axis, len(shapes)), shapes, check)
        return super().all_gather(value, axis, options)


def _check_identical(per_replica_shapes: list, what: str) -> None:
    first = per_replica_shapes[0]
    for r, shapes in enumerate(per_replica_shapes[1:], start=1):
        if shapes != first:
            raise errors.InvalidArgumentError(
                f"TPUStrategy {what} needs every replica's value to have exactly the same rank "
                f"and shape: replica 0 has {first}, replica {r} has {shapes}. Pad the values to "
                "one shape (or use drop_remainder=True so batches are equal) before gathering."
            )


def _assigned_devices(da: DeviceAssignment, system, job: str) -> tuple[str, ...]:
    """Replica ``r``'s device: its logical core 0's, ``/job:<job>/replica:0/task:t/...``.

    Raises:
        ValueError: an assignment for another topology.
    """
    topology = system.topology
    if not np.array_equal(da.topology.device_coordinates, topology.device_coordinates):
        raise ValueError(
            "experimental_device_assignment was built for another TPU topology than the "
            "initialized one; build it from the Topology that initialize_tpu_system returned."
        )
    devices = []
    for replica in range(da.num_replicas):
        coordinates = da.coordinates(replica, 0)
        task = topology.task_ordinal_at_coordinates(coordinates)
        ordinal = topology.tpu_device_ordinal_at_coordinates(coordinates)
        devices.append(f"/job:{job}/replica:0/task:{task}/device:TPU:{ordinal}")
    return tuple(devices)


def _task_of(device: str) -> int:
    return int(device.split("/task:")[1].split("/")[0])


def _validate_run_function(fn) -> None:
    if executing_eagerly() and not (
        isinstance(fn, (Function, _BoundFunction))
        or (callable(fn) and isinstance(vars(type(fn)).get("__call__"), Function))
    ):
        raise NotImplementedError(
            "TPUStrategy.run(fn, ...) does not support pure eager execution. please make sure "
            "the function passed into `strategy.run` is a `tf.function` or `strategy.run` is "
            "called inside a `tf.function` if eager behavior is enabled."
        )


def _check_inputs(args, kwargs, num_replicas: int, options: RunOptions) -> None:
    """Every replica runs one program: same input ranks and dtypes; same shapes unless the
    dynamic batch size is enabled."""
    position = 0
    for leaf in nest.flatten((args, kwargs)):
        parts = leaf.values if isinstance(leaf, DistributedValues) else (leaf,) * num_replicas
        if not isinstance(parts[0], Tensor):
            continue
        first = parts[0]._value
        for r, part in enumerate(parts[1:], start=1):
            value = part._value if isinstance(part, Tensor) else np.asarray(part)
            if value.ndim != first.ndim or value.dtype != first.dtype:
                raise ValueError(
                    f"Replicas must have matching input types. Replica 0 had input "
                    f"{position} of {first.dtype} rank {first.ndim}, replica {r} had "
                    f"{value.dtype} rank {value.ndim}."
                )
            if not options.experimental_enable_dynamic_batch_size and value.shape != first.shape:
                raise errors.InvalidArgumentError(
                    f"Run-time shape mismatch for TPUExecute argument[{position}]. "
                    f"Expected shape {list(first.shape)} (replica 0); got {list(value.shape)} "
                    f"on replica {r}. Every TPU replica runs the same compiled program, and "
                    "with RunOptions(experimental_enable_dynamic_batch_size=False) their inputs "
                    "must have the same shape in each step: a partial final batch split over "
                    "the replicas does not. Batch with drop_remainder=True, or keep TF's "
                    "default experimental_enable_dynamic_batch_size=True (TPUStrategy then pads "
                    "the smaller batches)."
                )
        position += 1


class TPUStrategyV2(Strategy):
    """``tf.distribute.TPUStrategy``: synchronous training on a simulated TPU slice.

    Args:
        tpu_cluster_resolver: a ``TPUClusterResolver`` (None: ``TPUClusterResolver("")``).
        experimental_device_assignment: None (one replica per TPU core) or a
            ``tf.tpu.experimental.DeviceAssignment``: its ``num_replicas`` replicas, replica
            ``r`` on the device of its logical core 0 (model parallelism over the other
            logical cores is not simulated: a replica computes on logical core 0).
        experimental_spmd_xla_partitioning: accepted; it changes only XLA compile time in TF.
        simdist_host_order_seed: simdist's addition: None (hosts deliver data in host
            order) or an int: each step permutes the hosts' data by a permutation drawn from
            ``(seed, step)``, to test that results do not depend on the order.

    Raises:
        FailedPreconditionError: the TPU system is not initialized for this resolver.
        TypeError: a device assignment that is not a DeviceAssignment.
        ValueError: a device assignment for another topology (see ``_assigned_devices``).
    """

    def __init__(
        self,
        tpu_cluster_resolver: TPUClusterResolver | None = None,
        experimental_device_assignment=None,
        experimental_spmd_xla_partitioning: bool = False,
        simdist_host_order_seed: int | None = None,
    ) -> None:
        if experimental_device_assignment is not None and not isinstance(
            experimental_device_assignment, DeviceAssignment
        ):
            raise TypeError(
                "experimental_device_assignment must be a tf.tpu.experimental.DeviceAssignment "
                f"or None, got {type(experimental_device_assignment).__name__}."
            )
        if tpu_cluster_resolver is None:
            tpu_cluster_resolver = TPUClusterResolver("")
        if not isinstance(tpu_cluster_resolver, TPUClusterResolver):
            raise TypeError(
                "tpu_cluster_resolver must be a tf.distribute.cluster_resolver."
                f"TPUClusterResolver, got {type(tpu_cluster_resolver).__name__}."
            )
        if simdist_host_order_seed is not None and not isinstance(simdist_host_order_seed, int):
            raise TypeError(
                f"simdist_host_order_seed must be an int or None, got {simdist_host_order_seed!r}."
            )
        system = tpu_system.require_initialized(tpu_cluster_resolver)
        super().__init__(
            TPUExtended(
                self,
                tpu_cluster_resolver,
                system,
                simdist_host_order_seed,
                experimental_device_assignment,
            )
        )
        self._use_spmd = bool(experimental_spmd_xla_partitioning)
        _log.info(
            "Found TPU system: %d cores, %d hosts", len(system.devices), system.slice.num_hosts
        )

    @property
    def cluster_resolver(self) -> TPUClusterResolver:
        return self._extended._tpu_cluster_resolver

    def _check_system(self) -> None:
        system = tpu_system.initialized_system(self.cluster_resolver)
        if system is None or system.devices != self._extended._system.devices:
            raise errors.FailedPreconditionError(
                "The TPU system has not been initialized: it was shut down or another TPU was "
                "initialized after this TPUStrategy was created. Initialize the TPU system "
                "again and create a new TPUStrategy."
            )

    # --- running -------------------------------------------------------------------------------
    def run(self, fn, args=(), kwargs=None, options: RunOptions | None = None):
        """Run ``fn`` on every TPU replica (see the module docstring for TPU rules).

        Raises:
            NotImplementedError: called eagerly with a plain Python function.
            InvalidArgumentError: replica inputs of different shapes with the dynamic batch
                size disabled.
            ValueError: replica inputs of different ranks or dtypes.
            FailedPreconditionError: the TPU system was shut down or replaced since.
        """
        _validate_run_function(fn)
        self._check_system()
        options = options or RunOptions()
        kwargs = kwargs or {}
        n = self.num_replicas_in_sync
        for leaf in nest.flatten((args, kwargs)):
            if isinstance(leaf, DistributedValues) and len(leaf.values) != n:
                break  # the base class says what is wrong
        else:
            _check_inputs(args, kwargs, n, options)
        return super().run(fn, args, kwargs, options)

    def _enter_replica(self, replica_id: int, runner, caller):
        teardown = super()._enter_replica(replica_id, runner, caller)
        state.replica_context = _TPUReplicaContext(self, replica_id, runner)
        return teardown

    def gather(self, value, axis: int):
        """Concatenate the replicas' values along ``axis`` on the host; every replica's value
        must have exactly the same shape (stricter than other strategies, as TF documents).

        Raises:
            InvalidArgumentError: shapes that differ, or rank-0 values.
        """
        self._require_cross_replica("gather")
        for leaf in nest.flatten(value):
            tensors = _replica_tensors(leaf, self.num_replicas_in_sync)
            _check_identical([tuple(t.shape) for t in tensors], "gather")
        return super().gather(value, axis)

    # --- logical devices (one per replica without a device assignment) ------------------------
    def _logical_devices_per_replica(self) -> int:
        da = self._extended._device_assignment
        return 1 if da is None else da.num_cores_per_replica

    def experimental_assign_to_logical_device(self, tensor, logical_device_id: int):
        """Identity: in TF a placement annotation on one of the replica's logical devices
        (simdist computes every replica on its logical device 0).

        Raises:
            ValueError: in SPMD mode, or a device id past the replica's logical devices.
        """
        if self._use_spmd:
            raise ValueError(
                "Cannot assign a tensor to a logical device in SPMD mode. To disable SPMD, "
                "Please construct the TPUStrategy with `experimental_spmd_xla_partitioning=False`"
            )
        count = self._logical_devices_per_replica()
        if not 0 <= logical_device_id < count:
            raise ValueError(
                "`logical_core_id` to assign must be lower then total number of logical "
                f"devices per replica. Received logical device id {logical_device_id} but there "
                f"are only total of {count} logical devices in replica."
            )
        return tensor

    def experimental_replicate_to_logical_devices(self, tensor):
        return tensor

    # --- input ---------------------------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        _refuse_per_replica(
            options,
            "InputReplicationMode.PER_REPLICA is only supported in "
            "`experimental_distribute_datasets_from_function`.",
        )
        if self._extended.num_hosts == 1:
            return super().experimental_distribute_dataset(dataset, options)
        from simdist.distribute.input_lib import DistributedDataset

        return self._per_host_input(
            lambda devices, hosts, h: DistributedDataset(dataset, devices, options, hosts, h)
        )

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        _refuse_per_replica(
            options,
            "InputReplicationMode.PER_REPLICA is only supported in  "
            "`experimental_distribute_datasets_from_function` of "
            "tf.distribute.MirroredStrategy",
        )
        if self._extended.num_hosts == 1:
            return super().distribute_datasets_from_function(dataset_fn, options)
        from simdist.distribute.input_lib import DistributedDatasetsFromFunction

        return self._per_host_input(
            lambda devices, hosts, h: DistributedDatasetsFromFunction(
                dataset_fn, devices, options, hosts, h
            )
        )

    def _per_host_input(self, host_input):
        """A multi-host slice's input: ``host_input(devices, num_hosts, host)`` per host, read
        in the hosts' order (:class:`~simdist.distribute.tpu_input.MultiHostInput`)."""
        from simdist.distribute.tpu_input import MultiHostInput

        ext = self._extended
        hosts = [host_input(ext.host_devices(h), ext.num_hosts, h) for h in ext._host_ids()]
        return MultiHostInput(hosts, hosts[0]._options, ext._host_order_seed, ext._devices)

    def __repr__(self) -> str:
        system = self._extended._system
        return (
            f"<TPUStrategy on {system.slice.accelerator_type} with "
            f"{self.num_replicas_in_sync} replica(s)>"
        )


TPUStrategy = TPUStrategyV2
"""TF's public name of ``TPUStrategyV2`` (the class's own name in TF too)."""


class TPUStrategyV1Alias(TPUStrategy):
    """``tf.distribute.experimental.TPUStrategy``: the deprecated name (warns, as TF)."""

    def __init__(self, tpu_cluster_resolver=None, device_assignment=None) -> None:
        _log.warning(
            "`tf.distribute.experimental.TPUStrategy` is deprecated, please use the "
            "non-experimental symbol `tf.distribute.TPUStrategy` instead."
        )
        super().__init__(tpu_cluster_resolver, experimental_device_assignment=device_assignment)


def _refuse_per_replica(options, message: str) -> None:
    """TPUStrategy's input takes no ``InputReplicationMode.PER_REPLICA`` (TF's message)."""
    if options is not None and options.experimental_replication_mode == (
        InputReplicationMode.PER_REPLICA
    ):
        raise NotImplementedError(message)
