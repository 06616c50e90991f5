"""``tf.distribute.Server``: one task of a cluster, started in this process.

In TF a ``Server`` starts a gRPC server for one task of a ``ClusterSpec``; the
parameter-server tutorial starts every worker and ps task of its in-process cluster this
way before creating the strategy. simdist's ``ParameterServerStrategy`` runs every task of
the cluster virtually in this process already, so a ``Server`` here checks its arguments as
TF does (the job and task exist in the cluster, the protocol is one TF knows), records the
task as started, and reports TF's ``target``; it opens no socket.
"""

from __future__ import annotations

import threading
from typing import Any

from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec
from simdist.distribute.cluster_resolver.tf_config import check_task

__all__ = ["Server", "started_tasks"]

_PROTOCOLS = ("grpc", "grpc+verbs", "grpc+gdr", "grpc+mpi")
_started: set[tuple[str, int]] = set()
_lock = threading.Lock()


def started_tasks() -> frozenset[tuple[str, int]]:
    """The (job, task index) of every ``Server`` started in this process."""
    with _lock:
        return frozenset(_started)


class Server:
    """``tf.distribute.Server(server_or_cluster_def, job_name, task_index, protocol, config,
    start=True)``.

    Args:
        server_or_cluster_def: a ``tf.train.ClusterSpec`` (or its dict).
        job_name: the task's job; may be omitted when the cluster has one job.
        task_index: the task's index in its job; may be omitted when the job has one task.
        protocol: ``"grpc"`` (the default) or another of TF's gRPC protocols.
        config: a ``tf.compat.v1.ConfigProto`` (kept, as the simulated task has no threads
            to tune).
        start: start it now.

    Raises:
        ValueError: an unknown job or task, or job/task left out where the cluster has
            several (the message lists them), or an unknown protocol.
        TypeError: the cluster is neither a ``ClusterSpec`` nor a dict.
    """

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
    ) -> None:
        if isinstance(server_or_cluster_def, dict):
            server_or_cluster_def = ClusterSpec(server_or_cluster_def)
        if not isinstance(server_or_cluster_def, ClusterSpec):
            raise TypeError(
                "Server needs a tf.train.ClusterSpec (or its dict), got "
                f"{type(server_or_cluster_def).__name__}."
            )
        spec = server_or_cluster_def
        if job_name is None:
            if len(spec.jobs) != 1:
                raise ValueError(
                    f"Must specify an explicit `job_name`: the cluster has jobs {spec.jobs}."
                )
            job_name = spec.jobs[0]
        if task_index is None:
            indices = spec.task_indices(job_name) if job_name in spec.jobs else []
            if len(indices) != 1:
                raise ValueError(
                    f"Must specify an explicit `task_index`: job {job_name!r} has tasks {indices}."
                )
            task_index = indices[0]
        check_task(spec, job_name, task_index, source="Server")
        protocol = protocol or "grpc"
        if protocol not in _PROTOCOLS:
            raise ValueError(f"Unknown server protocol {protocol!r}; use one of {_PROTOCOLS}.")
        self._cluster_spec = spec
        self._job_name = job_name
        self._task_index = int(task_index)
        self._protocol = protocol
        self._config = config
        self._started = False
        if start:
            self.start()

    def start(self) -> None:
        """Start the task (idempotent)."""
        with _lock:
            _started.add((self._job_name, self._task_index))
        self._started = True

    def join(self) -> None:
        """TF blocks here until the server shuts down, which never happens in-process.

        Raises:
            RuntimeError: always; a simulated task has nothing to serve (run the program
                that uses the cluster instead).
        """
        raise RuntimeError(
            "Server.join() would block forever: simdist runs the cluster's tasks inside the "
            "strategy of this process. Create the strategy and run the training here."
        )

    @property
    def target(self) -> str:
        """``"grpc://host:port"`` of this task, as TF gives it to a session."""
        address = self._cluster_spec.task_address(self._job_name, self._task_index)
        return f"{self._protocol}://{address}"

    @property
    def server_def(self) -> dict:
        """The cluster, job, task and protocol (a plain stand-in for TF's ``ServerDef``)."""
        return {
            "cluster": self._cluster_spec.as_dict(),
            "job_name": self._job_name,
            "task_index": self._task_index,
            "protocol": self._protocol,
        }

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> Server:
        """A one-task ``"local"`` cluster on ``localhost:0``, as TF's."""
        return Server(
            ClusterSpec({"worker": ["localhost:0"]}), "worker", 0, config=config, start=start
        )
