"""``MultiWorkerMirroredStrategy``: synchronous data parallelism over the devices of many workers.

Each worker (a process under ``mpiexec``, or a thread of :func:`simdist.sim.launch`'s
virtual cluster) runs the same program. Worker ``w`` of ``W`` with ``L`` local devices runs
replicas ``w*L .. w*L + L - 1`` (the chief, or worker 0 when there is none, runs the
first); ``num_replicas_in_sync`` is ``W*L``, ``experimental_local_results`` gives the
``L`` local values. Cross-worker work goes through the worker's
:class:`~simdist.backends.base.Transport`:

* every all-reduce (gradients, ``strategy.reduce``, sync-on-read reads, metrics) is one
  plan over all ``W*L`` ranks (:class:`~simdist.distribute.cross_worker_ops.CollectiveAllReduce`),
  so the virtual cluster and the MPI run give the same bits;
* a worker that makes a different cross-worker call stops every worker with
  ``CollectiveMismatchError``;
* variables start from worker 0's initial values (broadcast), as TF does;
* a step's gradients are packed into one all-reduce per dtype (``bytes_per_pack``).
"""

from __future__ import annotations

import logging

import numpy as np

from simdist.backends.worker_context import current_transport
from simdist.core.context import process_state
from simdist.core.tensor import make_tensor
from simdist.distribute import distributed_variables as dv
from simdist.distribute import multi_worker_util
from simdist.distribute.cluster_resolver.election import id_in_cluster, worker_count
from simdist.distribute.cluster_resolver.mpi import default_cluster_resolver
from simdist.distribute.collective_util import (
    CommunicationImplementation,
    CommunicationOptions,
)
from simdist.distribute.cross_device_ops import _check_same, _mean
from simdist.distribute.cross_worker_ops import CollectiveAllReduce
from simdist.distribute.mirrored_strategy import MirroredExtended
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import _initial_value, _replica_tensors
from simdist.distribute.values import DistributedValues, Mirrored, PerReplica
from simdist.distribute.virtual_devices import local_devices
from simdist.distribute.worker_context import current_worker

__all__ = ["MultiWorkerMirroredStrategy", "CollectiveAllReduceStrategy"]

_log = logging.getLogger("simdist")


class CollectiveAllReduceExtended(MirroredExtended):
    """``strategy.extended`` of a multi-worker strategy: this worker's devices, all replicas."""

    _plain_value_is_local_replica = True

    def __init__(self, strategy, devices, transport, options: CommunicationOptions, resolver):
        self._transport = transport
        self._options = options
        self._cluster_resolver = resolver
        cdo = CollectiveAllReduce(
            transport, len(devices), options.implementation, options.timeout_seconds
        )
        super().__init__(strategy, devices, cdo)

    # --- the worker's place -----------------------------------------------------------------
    @property
    def _num_workers(self) -> int:
        return self._transport.num_workers

    @property
    def _worker_index(self) -> int:
        return self._transport.worker_index

    @property
    def _num_replicas_in_sync(self) -> int:
        return self._num_workers * len(self._devices)

    @property
    def _replica_id_offset(self) -> int:
        return self._worker_index * len(self._devices)

    @property
    def should_checkpoint(self) -> bool:
        """Whether this worker's checkpoint is the canonical one (the chief's)."""
        return self._worker_index == 0

    should_save_summary = should_checkpoint

    @property
    def experimental_should_init(self) -> bool:
        return True

    def _in_multi_worker_mode(self) -> bool:
        return self._num_workers > 1

    def _input_workers(self):
        return self._num_workers, self._worker_index, self._host_sum

    # --- cross-worker host operations ---------------------------------------------------------
    def _host_reduce(self, reduce_op, arrays):
        return self._cross_device_ops_impl.reduce_arrays(reduce_op, arrays)

    def _host_gather(self, arrays):
        arrays = [np.asarray(a) for a in arrays]
        tag = ("gather", [(a.ndim, a.dtype.name) for a in arrays[:1]])
        per_worker = self._cross_device_ops_impl.exchange(tag, arrays)
        return [a for worker in per_worker for a in worker]

    def _host_sum(self, count: int) -> int:
        return int(sum(self._cross_device_ops_impl.exchange(("sum",), int(count))))

    def _host_first(self, array):
        array = np.asarray(array)
        mine = array if self._worker_index == 0 else None
        tag = ("first", array.shape, array.dtype.name)
        return self._cross_device_ops_impl.exchange(tag, mine)[0]

    # --- variables: every worker starts from worker 0's values --------------------------------
    def _create_distributed(self, next_creator, **kwargs):
        initial = _initial_value(kwargs)
        if self._num_workers > 1:
            array = initial._value
            tag = ("create_variable", array.shape, array.dtype.name)
            mine = array if self._worker_index == 0 else None
            chief = self._cross_device_ops_impl.exchange(tag, mine)[0]
            initial = make_tensor(chief, initial.dtype)
        return super()._create_distributed(next_creator, **dict(kwargs, initial_value=initial))

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """``StrategyExtended.reduce_to``; across several workers with one local replica, a
        plain tensor is that replica's value and is all-reduced over the workers (as TF)."""
        distributed = isinstance(value, (DistributedValues, dv.DistributedVariable))
        if not distributed and len(self._devices) == 1 and self._num_workers > 1:
            value = PerReplica([value])
        return super().reduce_to(reduce_op, value, destinations, options)

    # --- batched reductions: a step's gradients packed into few collectives -------------------
    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None) -> list:
        """``reduce_to`` for each pair; distributed values are packed by dtype (and
        ``bytes_per_pack``) into one cross-worker all-reduce per pack. With one local
        replica a plain tensor is that replica's value (a step's gradients)."""
        op = ReduceOp.from_value(reduce_op)
        pairs = list(value_destination_pairs)
        results: list = [None] * len(pairs)
        packed: list[int] = []  # positions of the pairs reduced together
        one_local = len(self._devices) == 1
        for i, (value, destinations) in enumerate(pairs):
            distributed = isinstance(value, (DistributedValues, dv.DistributedVariable))
            # With one local replica, merge_call hands over that replica's value itself
            # (TF wraps it back into a one-component PerReplica here).
            if not distributed and not one_local:
                results[i] = self.reduce_to(op, value, destinations, options)
            else:
                packed.append(i)
        values = [
            [t._value for t in _replica_tensors(pairs[i][0], len(self._devices))] for i in packed
        ]
        for i, reduced in zip(
            packed, self._batch_all_reduce_arrays(op, values, options), strict=True
        ):
            devices = self._destination_devices(pairs[i][1])
            outs = [make_tensor(reduced, None, d) for d in devices]
            results[i] = outs[0] if len(outs) == 1 else Mirrored(outs)
        return results

    def _batch_all_reduce_arrays(self, op: ReduceOp, values, options=None) -> list[np.ndarray]:
        """Values packed by dtype, then into packs of at most ``bytes_per_pack`` (a value
        larger than that is a pack of its own; 0: one pack per dtype), each pack one
        cross-worker all-reduce; one result per value, in order."""
        limit = (options or self._options).bytes_per_pack
        packs: dict[str, list[list[int]]] = {}
        for i, arrays in enumerate(values):
            _check_same(arrays)
            bucket = packs.setdefault(arrays[0].dtype.name, [[]])
            current = bucket[-1]
            size = sum(values[j][0].nbytes for j in current)
            if limit and current and size + arrays[0].nbytes > limit:
                current = []
                bucket.append(current)
            current.append(i)
        results: list = [None] * len(values)
        for bucket in packs.values():
            for pack in bucket:
                for i, reduced in zip(
                    pack, self._reduce_pack(op, [values[i] for i in pack]), strict=True
                ):
                    results[i] = reduced
        return results

    def _reduce_pack(self, op: ReduceOp, pack: list[list[np.ndarray]]) -> list[np.ndarray]:
        cdo = self._cross_device_ops_impl
        layout = [(arrays[0].shape, arrays[0].dtype.name) for arrays in pack]
        cdo.exchange(("batch_all_reduce", op.name, layout))
        flats = [
            np.concatenate([arrays[r].reshape(-1) for arrays in pack])
            for r in range(len(self._devices))
        ]
        total = cdo.all_reduce_flat(flats)
        out, start = [], 0
        for arrays in pack:
            part = total[start : start + arrays[0].size].reshape(arrays[0].shape)
            start += arrays[0].size
            out.append(_mean(part, cdo.num_ranks) if op is ReduceOp.MEAN else part)
        return out


def _task(resolver) -> tuple[int, int, str, int]:
    """``(num_workers, worker_index, job, task_id)`` from the resolver."""
    spec = resolver.cluster_spec()
    jobs = [j for j in ("chief", "worker") if j in spec.jobs]
    if not jobs:
        return 1, 0, "localhost", 0
    task_type, task_id = resolver.task_type, resolver.task_id
    if task_type is None or task_id is None:
        raise ValueError(
            "The cluster has workers but this task has no type and index: set TF_CONFIG's "
            '"task" (e.g. {"type": "worker", "index": 0}) or pass task_type/task_id to the '
            "cluster resolver."
        )
    if task_type not in ("chief", "worker"):
        raise ValueError(
            f"MultiWorkerMirroredStrategy runs on chief and worker tasks, not on a "
            f"{task_type!r} task. Run an evaluator's or ps task's program without this strategy."
        )
    if "ps" in spec.jobs:
        raise ValueError(
            "The cluster has a 'ps' job: parameter servers belong to ParameterServerStrategy, "
            "not MultiWorkerMirroredStrategy. Remove the 'ps' job from TF_CONFIG."
        )
    return (
        worker_count(spec, task_type),
        id_in_cluster(spec, task_type, task_id),
        task_type,
        int(task_id),
    )


class CollectiveAllReduceStrategy(Strategy):
    """Synchronous training across workers (``tf.distribute.MultiWorkerMirroredStrategy``).

    Args:
        cluster_resolver: where this worker sits in the cluster; default: the MPI world
            under ``mpiexec``, else ``TFConfigClusterResolver`` (``TF_CONFIG``).
        communication_options: a ``tf.distribute.experimental.CommunicationOptions``.

    Raises:
        ValueError: a malformed cluster, a task that is not a chief or worker, or a
            cluster whose workers are not running (this process is not one of them).
        TypeError: ``communication_options`` of the wrong type.
    """

    def __init__(self, cluster_resolver=None, communication_options=None) -> None:
        if communication_options is None:
            communication_options = CommunicationOptions()
        if not isinstance(communication_options, CommunicationOptions):
            raise TypeError(
                "communication_options must be a tf.distribute.experimental."
                f"CommunicationOptions, got {type(communication_options).__name__}."
            )
        resolver = cluster_resolver if cluster_resolver is not None else default_cluster_resolver()
        num_workers, index, job, task_id = _task(resolver)
        transport = current_transport()
        if (transport.num_workers, transport.worker_index) != (num_workers, index):
            raise ValueError(_not_running(num_workers, index, transport))
        _configure_collectives(num_workers)
        kind = "GPU" if local_devices("GPU") else "CPU"
        # TF takes a worker's GPUs, or else its one CPU (never several logical CPUs)
        count = len(local_devices(kind)) if kind == "GPU" else 1
        if num_workers == 1:
            devices = local_devices(kind)[:count]
        else:
            devices = tuple(
                f"/job:{job}/replica:0/task:{task_id}/device:{kind}:{i}" for i in range(count)
            )
        extended = CollectiveAllReduceExtended(
            self, devices, transport, communication_options, resolver
        )
        super().__init__(extended)
        self._cluster_resolver = resolver
        self._task_name = f"{job}:{task_id}"
        multi_worker_util.register_strategy(self)
        impl = communication_options.implementation.name
        if num_workers == 1:
            _log.info(
                "Single-worker MultiWorkerMirroredStrategy with local_devices = %s, "
                "communication = CommunicationImplementation.%s",
                devices,
                impl,
            )
        else:
            _log.info(
                "MultiWorkerMirroredStrategy with cluster_spec = %s, task_type = %r, task_id = "
                "%d, num_workers = %d, local_devices = %s, communication = "
                "CommunicationImplementation.%s",
                resolver.cluster_spec().as_dict(),
                job,
                task_id,
                num_workers,
                devices,
                impl,
            )

    @property
    def cluster_resolver(self):
        return self._cluster_resolver

    def run(self, fn, args=(), kwargs=None, options=None):
        """``Strategy.run``; in a virtual cluster, each call is a tick of the fault plan."""
        worker = current_worker()
        if worker is not None:
            worker.steps += 1
            if worker.faults is not None:
                worker.faults.on_step(self._extended._worker_index, worker.steps)
        try:
            return super().run(fn, args, kwargs, options)
        except BaseException as exc:
            self._name_the_replica(exc)
            raise

    def _name_the_replica(self, exc: BaseException) -> None:
        """Across workers, an error says which replica of the whole group raised it
        (``replica_id_in_sync_group``), on which worker and task, not the local index."""
        local = getattr(exc, "replica_id", None)
        extended = self._extended
        if local is None or extended._num_workers == 1:
            return
        group_id = extended._replica_id_offset + local
        exc.replica_id_in_sync_group = group_id
        exc.worker_index = extended._worker_index
        notes = getattr(exc, "__notes__", None)
        if notes:  # the runner's note names the local replica only
            notes[:] = [n for n in notes if not n.startswith("(raised on replica ")]
        note = (
            f"(raised on replica_id_in_sync_group {group_id} of "
            f"{extended._num_replicas_in_sync}: local replica {local} of worker "
            f"{extended._worker_index} ({self._task_name}) in strategy.run)"
        )
        if hasattr(exc, "add_note") and note not in (notes or ()):
            exc.add_note(note)


MultiWorkerMirroredStrategy = CollectiveAllReduceStrategy
"""TF's public name of ``CollectiveAllReduceStrategy`` (the class's own name in TF too)."""


class _ExperimentalMultiWorkerMirroredStrategy(MultiWorkerMirroredStrategy):
    """The experimental name, whose first argument is ``communication``."""

    def __init__(
        self,
        communication=CommunicationImplementation.AUTO,
        cluster_resolver=None,
        communication_options=None,
    ) -> None:
        if communication_options is None:
            communication_options = CommunicationOptions(implementation=communication)
        super().__init__(cluster_resolver, communication_options)


def _configure_collectives(num_workers: int) -> None:
    """TF's rule: collectives are configured when the first multi-worker strategy is made,
    which must come before the eager runtime starts (a first tensor, variable or device
    listing). One worker: a warning, as TF logs; several: TF's RuntimeError."""
    runtime = process_state()
    if runtime.runtime_started and not runtime.collectives_configured:
        if num_workers > 1:
            raise RuntimeError(
                "Collective ops must be configured at program startup: create "
                "MultiWorkerMirroredStrategy before any call that creates a tensor or a "
                "variable or lists devices (the API page: in eager mode the strategy must be "
                "created before other API calls)."
            )
        _log.warning(
            "Collective ops is not configured at program startup. Some performance features "
            "may not be enabled."
        )
    runtime.collectives_configured = True


def _not_running(num_workers: int, index: int, transport) -> str:
    if transport.num_workers == 1:
        return (
            f"The cluster has {num_workers} workers (this task is worker {index}), but this "
            "process is not part of a running cluster, so the first collective would wait "
            "forever. Start every worker: in one process with simdist.sim.launch(fn, "
            f"workers={num_workers}) (or `simdist check-cluster` to test a TF_CONFIG), or as "
            f"processes with `mpiexec -n {num_workers} python -m mpi4py your_script.py`, or "
            "one process per task with TF_CONFIG in each one's environment (python -m "
            f"simdist.sim.processes -n {num_workers} your_script.py starts them locally)."
        )
    return (
        f"The cluster resolver says this task is worker {index} of {num_workers}, but the "
        f"running cluster made it worker {transport.worker_index} of {transport.num_workers}. "
        "Under mpiexec leave TF_CONFIG unset (the MPI rank decides); in simdist.sim.launch "
        "each worker gets its own TF_CONFIG."
    )
