"""Which worker this thread is: its transport, task and local devices in a virtual cluster.

A real cluster runs one worker per process, so process-wide state (the global random seed,
the number of local GPUs, ``TF_CONFIG``) is naturally per worker. The virtual cluster of
:func:`simdist.sim.launch` runs its workers as threads of one process; each worker thread
carries a :class:`WorkerContext` that stands for that process state. This module sits in
the distribute runtime (below the transports of :mod:`simdist.backends`): it knows a
transport only as a value it holds; :func:`simdist.backends.worker_context.current_transport`
finds the process's transport when no virtual worker is set.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from simdist.core import context as _core_context
from simdist.core.context import ProcessState

__all__ = ["WorkerContext", "current_worker", "set_worker"]


@dataclasses.dataclass
class WorkerContext:
    """What one worker of a virtual cluster has of its own.

    Attributes:
        transport: its connection to the other workers (a ``simdist.backends`` transport).
        task_type, task_id: its task in the cluster (``"worker"``, 1).
        gpus: virtual GPUs on its host (``None``: the process setting).
        faults: the cluster's fault plan, or ``None``.
        steps: ``strategy.run`` calls this worker has made (the fault plan's clock).
        uids: Keras's layer-name counts of this worker.
        strategy: the multi-worker strategy it created last (saves consult it).
        process: its process-wide runtime state (has the eager runtime started?).
    """

    transport: Any
    task_type: str = "worker"
    task_id: int = 0
    gpus: int | None = None
    faults: Any = None
    steps: int = 0
    uids: dict = dataclasses.field(default_factory=dict)
    strategy: Any = None
    process: ProcessState = dataclasses.field(default_factory=ProcessState)


_local = threading.local()


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
