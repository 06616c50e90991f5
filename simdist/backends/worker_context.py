"""Which transport this code's worker uses: the virtual cluster's, MPI's, TF_CONFIG's, or none.

The worker identity itself (:class:`~simdist.distribute.worker_context.WorkerContext`) lives
in the distribute runtime, below the transports; this module, beside the transports, finds
the one a multi-worker strategy should use and re-exports the identity helpers.
"""

from __future__ import annotations

import threading

from simdist import settings
from simdist.backends import process_env
from simdist.backends.base import LocalTransport, Transport
from simdist.distribute.mpi_env import in_mpi_job
from simdist.distribute.worker_context import WorkerContext, current_worker, set_worker

__all__ = ["WorkerContext", "current_worker", "current_transport", "set_worker"]

_process_transport: Transport | None = None
_process_key: object = None
_lock = threading.Lock()


def current_transport() -> Transport:
    """The transport of the worker running this code.

    A virtual cluster's worker thread: its in-process transport. Under ``mpiexec`` (the
    launcher's environment says so): the MPI world, created on first use. A process whose
    ``TF_CONFIG`` environment variable makes it one of two or more training tasks: the
    socket transport to the other tasks (:class:`~simdist.backends.sockets.SocketTransport`;
    it waits for them at start-up). Otherwise the one-worker cluster.
    """
    global _process_transport, _process_key
    context = current_worker()
    if context is not None:
        return context.transport
    if in_mpi_job():
        with _lock:
            if _process_transport is None or _process_key != "mpi":
                from simdist.backends.mpi import MPITransport

                # The documented fast option: MPI's own Allreduce (not bit-identical to
                # the virtual cluster).
                native = settings.get().mpi_native_allreduce
                _process_transport = MPITransport(native_allreduce=native)
                _process_key = "mpi"
        return _process_transport
    task = process_env.tf_config_cluster()
    if task is not None:
        addresses, names, index = task
        key = (tuple(addresses), index)
        with _lock:
            if _process_transport is None or _process_key != key:
                from simdist.backends.sockets import SocketTransport

                secret, source = process_env.job_key(process_env.training_cluster())
                _process_transport = SocketTransport(
                    addresses, names, index, secret, process_env.worker_timeout(), source
                )
                _process_key = key
        return _process_transport
    return LocalTransport()
