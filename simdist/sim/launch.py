"""Virtual clusters: run a program as W workers x L devices inside one process.

:func:`launch` starts one thread per worker. Each worker has what a process of a real
cluster has of its own: a ``TF_CONFIG`` naming its task (in ``os.environ["TF_CONFIG"]`` on
the worker's thread, see :mod:`simdist.sim.worker_environ`), its host's virtual GPUs, its
global random seed, Keras's layer-name counts; and an in-process transport to the other
workers (:mod:`simdist.backends.inprocess`). All computation is real.

Workers run in lockstep, one at a time, handing over at each cross-worker collective (the
replica runner of :mod:`simdist.distribute.runner`, one level up), so results never depend
on thread scheduling and equal, bit for bit, the same program run as W processes under
``mpiexec``. A worker that raises (or is killed by a :class:`~simdist.distribute.faults.FaultPlan`)
stops every worker; :func:`launch` then raises its exception, noted with the worker's
index, or :class:`~simdist.backends.base.WorkerFailedError` for a killed worker.

Example::

    def train():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        ...
        return model.get_weights()

    per_worker = simdist.sim.launch(train, workers=2, devices_per_worker=2)
"""

from __future__ import annotations

import json
import runpy
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from simdist import settings
from simdist.backends.base import WorkerFailedError
from simdist.backends.inprocess import InProcessTransport
from simdist.core import step_hooks
from simdist.core.context import state
from simdist.core.random import RandomState
from simdist.distribute import runner as runner_lib
from simdist.distribute.faults import FaultPlan, WorkerKilled
from simdist.distribute.worker_context import WorkerContext, set_worker
from simdist.sim.worker_environ import set_worker_variables, worker_environ

__all__ = ["launch", "launch_script", "cluster_tasks"]

BASE_PORT = 20000


def cluster_tasks(cluster: Mapping[str, Sequence[str]]) -> list[tuple[str, int]]:
    """The training tasks of a cluster in worker order: the chief, then the workers.

    Raises:
        ValueError: no chief or worker task, or a job a virtual MultiWorker cluster cannot
            run (``ps``).
    """
    if "ps" in cluster:
        raise ValueError(
            "The cluster has a 'ps' job: parameter-server clusters run under "
            "ParameterServerStrategy, not a launched MultiWorker cluster."
        )
    tasks = [("chief", i) for i in range(len(cluster.get("chief", ())))]
    tasks += [("worker", i) for i in range(len(cluster.get("worker", ())))]
    if not tasks:
        raise ValueError(f"The cluster {dict(cluster)} has no chief or worker task to start.")
    return tasks


def _worker_timeout(timeout: float | None) -> float:
    if timeout is not None:
        return float(timeout)
    return settings.get().worker_timeout


def launch(
    fn: Callable[..., Any],
    workers: int = 2,
    devices_per_worker: int | None = None,
    *,
    args: tuple = (),
    kwargs: dict | None = None,
    cluster: Mapping[str, Sequence[str]] | None = None,
    faults: FaultPlan | None = None,
    timeout: float | None = None,
) -> list:
    """Run ``fn(*args, **kwargs)`` on every worker of a virtual cluster; return their results.

    Args:
        fn: the program each worker runs (it creates its own strategy, model, data).
        workers: the number of workers (ignored when ``cluster`` is given).
        devices_per_worker: virtual GPUs on each worker's host (0: CPU only); default: a
            host's GPU count, ``SIMDIST_VIRTUAL_GPUS`` or 4, what each process of the same
            program run under ``mpiexec`` has.
        args, kwargs: passed to ``fn`` on every worker.
        cluster: a TF_CONFIG ``"cluster"`` dict (chief and worker jobs); default:
            ``{"worker": ["localhost:20000", ...]}``.
        faults: a :class:`~simdist.distribute.faults.FaultPlan`.
        timeout: seconds a worker may run without reaching a collective
            (default ``SIMDIST_WORKER_TIMEOUT`` or 600).

    Returns:
        Each worker's return value, in worker order (the chief first).

    Raises:
        WorkerFailedError: a worker was killed by the fault plan (names it).
        Exception: the first exception a worker raised (noted with the worker's index);
            the other workers are stopped.
        CollectiveMismatchError: the workers made different collective calls, or one
            returned while others waited in a collective.
        ValueError: bad arguments.
        TypeError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(
            f"launch needs a callable (the program each worker runs), got {fn!r}; pass the "
            "function itself, e.g. tf.sim.launch(main, workers=2), or use launch_script for a file."
        )
    if cluster is None:
        workers = step_hooks.shape("workers", workers)
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an int >= 1, got {workers!r}")
        cluster = {"worker": [f"localhost:{BASE_PORT + i}" for i in range(workers)]}
    cluster = {job: list(addresses) for job, addresses in cluster.items()}
    tasks = cluster_tasks(cluster)
    if devices_per_worker is None:
        devices_per_worker = settings.get().virtual_gpus
    devices_per_worker = step_hooks.shape("devices_per_worker", devices_per_worker)
    if isinstance(devices_per_worker, bool) or not isinstance(devices_per_worker, int):
        raise ValueError(f"devices_per_worker must be an int >= 0, got {devices_per_worker!r}")
    if devices_per_worker < 0:
        raise ValueError(f"devices_per_worker must be >= 0, got {devices_per_worker}")
    count = len(tasks)
    if faults is not None:
        faults.check(count)
    kwargs = dict(kwargs or {})

    def setup(index: int) -> Callable[[], None]:
        task_type, task_id = tasks[index]
        config = {"cluster": cluster, "task": {"type": task_type, "index": task_id}}
        set_worker_variables({"TF_CONFIG": json.dumps(config)})  # its own os.environ entry
        transport = InProcessTransport(runner, index, count)
        set_worker(WorkerContext(transport, task_type, task_id, devices_per_worker, faults))
        state.random_state = RandomState()  # the worker's process-wide random state
        state.strategy_stack = []

        def teardown() -> None:
            set_worker(None)
            state.random_state = None
            set_worker_variables(None)

        return teardown

    runner = runner_lib.ReplicaRunner(count, setup, noun="worker", timeout=_worker_timeout(timeout))
    try:
        with worker_environ():
            return runner.run(fn, [(tuple(args), kwargs)] * count)
    except WorkerKilled as killed:
        task_type, task_id = tasks[killed.worker]
        raise WorkerFailedError(
            f"Worker {killed.worker} ({task_type}:{task_id}) of {count} died at its step "
            f"{killed.step} (killed by the fault plan); the other workers were stopped. "
            "Restart the cluster and restore from the last checkpoint.",
            killed.worker,
        ) from None


def launch_script(
    path: str,
    workers: int = 2,
    devices_per_worker: int | None = None,
    argv: Sequence[str] = (),
    **kwargs,
) -> list:
    """Run the Python script ``path`` as ``__main__`` on every worker of a virtual cluster.

    ``sys.argv`` is ``[path, *argv]`` on every worker while it runs. Other keyword
    arguments are :func:`launch`'s. Returns each worker's module globals.
    """
    saved = sys.argv
    sys.argv = [path, *argv]
    try:
        return launch(
            runpy.run_path,
            workers,
            devices_per_worker,
            args=(path,),
            kwargs={"run_name": "__main__"},
            **kwargs,
        )
    finally:
        sys.argv = saved
