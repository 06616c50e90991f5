"""The TensorFlow adapter: the catalogue run against the real ``tf.distribute`` on CPUs.

TensorFlow is imported when the adapter is created, never before. The host CPU is split
into ``max_replicas`` logical CPU devices (``tf.config.set_logical_device_configuration``),
which TensorFlow allows only before its runtime starts; a process that already started it
with fewer logical CPUs gets a RuntimeError saying so.

Multi-worker properties run on a local cluster of ``max_workers`` TensorFlow processes
(:mod:`simdist.testing.adapters.tf_cluster`, default 2; ``--workers N``), started at the
first such property and kept until ``close()``. TensorFlow's MultiWorkerMirroredStrategy
puts one replica on each CPU worker (it takes local devices from GPUs only), so clusters
are W x 1.

TPU and parameter-server properties: TensorFlow's partitioners run in-process and are
checked (``partitioner_shards``); the other operations raise ``Unsupported`` with the reason
(no TPU here; a parameter-server cluster needs ``tf.distribute.Server`` tasks, which change
the process's eager context for every later property), so their properties SKIP saying why.
"""

from __future__ import annotations

import numpy as np

from simdist.testing.adapters.base import Unsupported
from simdist.testing.adapters.cluster_adapter import ClusterAdapter
from simdist.testing.adapters.module_adapter import ModuleAdapter

ZERO_SIZE_CRASH = (
    "TensorFlow's eager collective all-reduce / all-gather between logical CPUs kills the "
    "process (segfault) when the collected result is zero-size (TF 2.21, CPU)"
)
MW_ZERO_SIZE_CRASH = (
    "TensorFlow's MultiWorkerMirroredStrategy kills the worker processes (segfault) when a "
    "cross-worker all-reduce, all-gather or initial-value broadcast carries a zero-size "
    "result (TF 2.21, CPU)"
)
NO_TPU = (
    "TensorFlow's TPUStrategy needs a TPU (none here; TF has no simulated TPU system), so "
    "the TPU properties are checked on simdist and the reference only"
)
NO_PS_CLUSTER = (
    "TensorFlow's ParameterServerStrategy needs tf.distribute.Server worker and ps tasks; "
    "connecting this process to them changes its eager context for every later property, "
    "so the adapter runs only what TF computes in-process (the partitioners)"
)
MISMATCH_ABORT = (
    "TensorFlow's collective all-gather of shapes that differ outside the gathered axis "
    "aborts the process's collective executor: every later collective fails (TF 2.21, CPU)"
)


def _refuse_crashing(
    per_replica, axis: int | None = None, zero_size: str = ZERO_SIZE_CRASH
) -> None:
    """Raises Unsupported for inputs that crash TF's collectives or poison the process."""
    arrays = [np.asarray(v) for v in per_replica]
    if len(arrays) < 2:
        return
    if axis is None and any(a.size == 0 for a in arrays):
        raise Unsupported(zero_size)
    if axis is not None and all(a.size == 0 for a in arrays):
        raise Unsupported(zero_size)
    if axis is not None and len({a.ndim for a in arrays}) == 1 and arrays[0].ndim > 0:
        ax = axis % arrays[0].ndim if -arrays[0].ndim <= axis < arrays[0].ndim else None
        rest = {a.shape[:ax] + a.shape[ax + 1 :] for a in arrays} if ax is not None else set()
        if len(rest) > 1:
            raise Unsupported(MISMATCH_ABORT)


def configure_logical_cpus(tf, count: int) -> list[str]:
    """Splits the first physical CPU into ``count`` logical CPUs (or checks it was done).

    Args:
      tf: the ``tensorflow`` module.
      count: logical CPUs wanted.

    Returns:
      Their names, ``/device:CPU:0`` first.

    Raises:
      RuntimeError: TensorFlow's runtime already started with fewer logical CPUs.
    """
    cpu = tf.config.list_physical_devices("CPU")[0]
    if tf.config.get_logical_device_configuration(cpu) is None:
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
            )
        except RuntimeError:
            pass  # already initialised: checked below
    names = [d.name for d in tf.config.list_logical_devices("CPU")]
    if len(names) < count:
        raise RuntimeError(
            f"TensorFlow already runs with {len(names)} logical CPU(s), {count} needed; "
            "create the TensorFlow adapter before any other TensorFlow work in the process"
        )
    return names


class TensorFlowAdapter(ClusterAdapter, ModuleAdapter):
    """TensorFlow's MirroredStrategy over ``max_replicas`` logical CPU devices, and its
    MultiWorkerMirroredStrategy over ``max_workers`` local processes (one CPU replica each)."""

    name = "tensorflow"
    min_workers = 2
    max_workers = 2
    max_devices_per_worker = 1
    _pool = None

    def __init__(self, max_replicas: int = 4) -> None:
        try:
            import tensorflow as tf
        except ImportError as error:
            raise ImportError(
                "the tensorflow adapter needs TensorFlow: pip install 'simdist[tensorflow]'"
            ) from error
        super().__init__(tf, configure_logical_cpus(tf, max_replicas), max_replicas)

    def all_reduce(self, op, per_replica):
        _refuse_crashing(per_replica)
        return super().all_reduce(op, per_replica)

    def all_gather(self, per_replica, axis):
        _refuse_crashing(per_replica, axis)
        return super().all_gather(per_replica, axis)

    def gather(self, per_replica, axis):
        _refuse_crashing(per_replica, axis)
        return super().gather(per_replica, axis)

    def strategy_names(self) -> list[str]:
        return ["mirrored", "one_device", "central_storage", "default"]

    # --- multi-worker: a pool of local TensorFlow processes --------------------------------
    def set_workers(self, workers: int) -> None:
        """Fixes the local cluster at ``workers`` processes (one pool, started once)."""
        super().set_workers(workers)
        self.min_workers = workers
        if self._pool is not None and self._pool.workers != workers:
            self.close()

    def run_on_cluster(self, workers, devices_per_worker, program, kwargs):
        from simdist.testing.adapters.tf_cluster import WorkerPool

        if self._pool is None or not self._pool.alive:
            self._pool = WorkerPool(workers)
        return self._pool.run(program, kwargs)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def multi_worker_reduce(self, op, per_replica, workers, axis):
        if axis is None:
            _refuse_crashing(per_replica, zero_size=MW_ZERO_SIZE_CRASH)
        else:  # the cross-worker all-reduce carries each replica's sum along the axis
            first = np.asarray(per_replica[0])
            if first.ndim and np.delete(np.array(first.shape), axis % first.ndim).prod() == 0:
                raise Unsupported(MW_ZERO_SIZE_CRASH)
        return super().multi_worker_reduce(op, per_replica, workers, axis)

    def multi_worker_all_reduce(self, op, per_replica, workers):
        _refuse_crashing(per_replica, zero_size=MW_ZERO_SIZE_CRASH)
        return super().multi_worker_all_reduce(op, per_replica, workers)

    def multi_worker_variable_init(self, initials, devices_per_worker):
        if any(np.asarray(v).size == 0 for v in initials):
            raise Unsupported(MW_ZERO_SIZE_CRASH)
        return super().multi_worker_variable_init(initials, devices_per_worker)

    def multi_worker_gather(self, per_replica, workers, axis):
        _refuse_crashing(per_replica, axis, MW_ZERO_SIZE_CRASH)
        return super().multi_worker_gather(per_replica, workers, axis)

    def make_strategy(self, name: str, num_replicas: int):
        if name == "central_storage":
            return self.tf.distribute.experimental.CentralStorageStrategy(
                self.devices[:num_replicas]
            )
        if name == "default":
            return self.tf.distribute.get_strategy()
        if name == "mirrored":
            return self._mirrored_class(num_replicas)(self.devices[:num_replicas])
        return super().make_strategy(name, num_replicas)

    def _mirrored_class(self, num_replicas: int):
        """MirroredStrategy with collective keys of its own for each replica count.

        TensorFlow numbers the collective groups of every MirroredStrategy in a process
        from the same base, so a 2-replica and a 4-replica strategy both use group 1 and
        their all-gathers abort ("joining a group with size 4, but that group has size
        2"). A subclass per replica count with its own ``_collective_key_base`` (the
        attribute TF's multi-worker code uses for the same purpose) keeps them apart.
        """
        base = self.tf.distribute.MirroredStrategy
        return type(
            f"MirroredStrategy{num_replicas}",
            (base,),
            {"_collective_key_base": 100_000 * num_replicas},
        )

    # --- TPU and parameter servers: the partitioners; the rest is unsupported here ---------
    def partitioner_shards(self, kind, params, shape, dtype):
        tf = self.tf
        make = getattr(tf.distribute.experimental.partitioners, f"{kind}Partitioner")
        return [int(c) for c in make(**params)(tf.TensorShape(list(shape)), getattr(tf, dtype))]

    def tpu_num_replicas(self, accelerator):
        raise Unsupported(NO_TPU)

    def tpu_gather(self, accelerator, per_replica, axis):
        raise Unsupported(NO_TPU)

    def tpu_all_gather(self, accelerator, per_replica, axis):
        raise Unsupported(NO_TPU)

    def tpu_run(self, accelerator, in_function):
        raise Unsupported(NO_TPU)

    def tpu_steps(self, accelerator, elements, global_batch_size, drop_remainder, dynamic, seed):
        raise Unsupported(NO_TPU)

    def sharded_variable(self, initial, num_shards, delta, grad, lr):
        raise Unsupported(NO_PS_CLUSTER)

    def ps_counter_closures(self, workers, closures, kills, seed):
        raise Unsupported(NO_PS_CLUSTER)

    def ps_async_run(self, workers, closures, seed):
        raise Unsupported(NO_PS_CLUSTER)

    def ps_failure_run(self, workers, num_ps, closures, failing_ps, after_closures):
        raise Unsupported(NO_PS_CLUSTER)
