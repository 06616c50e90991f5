"""Which worker this thread is: its transport, task and local devices in a virtual cluster.

A real cluster runs one worker per process, so process-wide state (the global random seed,
the number of local GPUs, ``TF_CONFIG``) is naturally per worker. The virtual cluster of
:func:`simdist.sim.launch` runs its workers as threads of one process; each worker thread
carries a :class:`WorkerContext` that stands for that process state. Outside a virtual
cluster :func:`current_transport` finds the MPI world when the process runs under
``mpiexec`` (mpi4py is imported only then), and otherwise the one-worker cluster.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from simdist import settings
from simdist.backends.base import LocalTransport, Transport
from simdist.core import context as _core_context
from simdist.core.context import ProcessState

__all__ = ["WorkerContext", "current_worker", "current_transport", "set_worker"]


@dataclasses.dataclass
class WorkerContext:
    """What one worker of a virtual cluster has of its own.

    Attributes:
        transport: its connection to the other workers.
        task_type, task_id: its task in the cluster (``"worker"``, 1).
        gpus: virtual GPUs on its host (``None``: the process setting).
        faults: the cluster's fault plan, or ``None``.
        steps: ``strategy.run`` calls this worker has made (the fault plan's clock).
        uids: Keras's layer-name counts of this worker.
        strategy: the multi-worker strategy it created last (saves consult it).
        process: its process-wide runtime state (has the eager runtime started?).
    """

    transport: Transport
    task_type: str = "worker"
    task_id: int = 0
    gpus: int | None = None
    faults: Any = None
    steps: int = 0
    uids: dict = dataclasses.field(default_factory=dict)
    strategy: Any = None
    process: ProcessState = dataclasses.field(default_factory=ProcessState)


_local = threading.local()
_mpi_transport: Transport | None = None
_mpi_lock = threading.Lock()


def current_worker() -> WorkerContext | None:
    """This thread's worker context (``None`` outside a virtual cluster)."""
    return getattr(_local, "worker", None)


def _worker_process_state() -> ProcessState | None:
    worker = getattr(_local, "worker", None)
    return None if worker is None else worker.process


_core_context.worker_state_hook = _worker_process_state


def set_worker(context: WorkerContext | None) -> None:
    """Make ``context`` this thread's worker (the launcher calls it on each worker thread)."""
    _local.worker = context


def current_transport() -> Transport:
    """The transport of the worker running this code.

    A virtual cluster's worker thread: its in-process transport. Under ``mpiexec`` (the
    launcher's environment says so): the MPI world, created on first use. Otherwise the
    one-worker cluster.
    """
    global _mpi_transport
    context = current_worker()
    if context is not None:
        return context.transport
    from simdist.distribute.cluster_resolver.mpi import in_mpi_job

    if in_mpi_job():
        with _mpi_lock:
            if _mpi_transport is None:
                from simdist.backends.mpi import MPITransport

                # The documented fast option: MPI's own Allreduce (not bit-identical to
                # the virtual cluster).
                native = settings.get().mpi_native_allreduce
                _mpi_transport = MPITransport(native_allreduce=native)
        return _mpi_transport
    return LocalTransport()
