"""``tf.train.ClusterSpec``: the jobs of a cluster and the address of each task.

A cluster is a mapping from job names (``"chief"``, ``"worker"``, ``"ps"``,
``"evaluator"``) to tasks; each job is given either as a list of ``"host:port"``
addresses (task ``i`` is the ``i``-th entry) or as a sparse mapping from task index to
address. ``as_dict()`` gives the list form back when the indices are dense.

>>> spec = ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": {1: "p1:2222"}})
>>> spec.jobs, spec.num_tasks("worker"), spec.task_address("ps", 1)
(['worker', 'ps'], 2, 'p1:2222')
>>> spec.as_dict()
{'worker': ['w0:2222', 'w1:2222'], 'ps': {1: 'p1:2222'}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ClusterSpec"]


def _job_tasks(job_name: Any, tasks: Any) -> dict[int, str]:
    if not isinstance(job_name, str):
        raise TypeError(f"Job name {job_name!r} must be a string such as 'worker'.")
    if isinstance(tasks, (list, tuple)):
        indexed = dict(enumerate(tasks))
    elif isinstance(tasks, Mapping):
        indexed = {}
        for index, address in tasks.items():
            try:
                indexed[int(index)] = address
            except (TypeError, ValueError):
                raise TypeError(
                    f"Task index {index!r} of job {job_name!r} must be an integer."
                ) from None
    else:
        raise TypeError(
            f"The tasks for job {job_name!r} must be a list of 'host:port' strings or a "
            f"dictionary from integer task indices to 'host:port' strings, got "
            f"{type(tasks).__name__}."
        )
    for index, address in indexed.items():
        if not isinstance(address, str):
            raise TypeError(
                f"Task address {address!r} (job {job_name!r}, task {index}) must be a "
                f"'host:port' string."
            )
    return indexed


class ClusterSpec:
    """A set of tasks organised into jobs (``tf.train.ClusterSpec``).

    Args:
        cluster: a mapping from job name to a list of addresses or to a mapping from
            integer task index to address; or another ``ClusterSpec`` (copied, jobs in
            sorted order as TF's copy through a ``ClusterDef`` gives them).

    Raises:
        TypeError: ``cluster`` is not of that shape.
    """

    def __init__(self, cluster: Mapping[str, Any] | ClusterSpec) -> None:
        if isinstance(cluster, ClusterSpec):
            self._cluster_spec: dict[str, dict[int, str]] = {
                job: dict(sorted(tasks.items()))
                for job, tasks in sorted(cluster._cluster_spec.items())
            }
        elif isinstance(cluster, Mapping):
            self._cluster_spec = {job: _job_tasks(job, tasks) for job, tasks in cluster.items()}
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of "
                f"network addresses, or a ClusterSpec; got {type(cluster).__name__}."
            )

    def __bool__(self) -> bool:
        return bool(self._cluster_spec)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClusterSpec):
            return self._cluster_spec == other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]  # mutable-equality class, as TF's

    def __repr__(self) -> str:
        as_dict = self.as_dict()
        items = ", ".join(f"{job!r}: {as_dict[job]!r}" for job in sorted(as_dict))
        return "ClusterSpec({" + items + "})"

    def as_dict(self) -> dict[str, list[str] | dict[int, str]]:
        """Job name -> list of addresses (dense indices) or {index: address} (sparse)."""
        result: dict[str, list[str] | dict[int, str]] = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if not indices:
                result[job] = {}
            elif max(indices) + 1 == len(indices):
                result[job] = [self._cluster_spec[job][i] for i in indices]
            else:
                result[job] = {i: self._cluster_spec[job][i] for i in indices}
        return result

    def as_cluster_def(self) -> dict[str, dict[int, str]]:
        """A plain stand-in for TF's ``ClusterDef``: jobs and tasks in sorted order."""
        return {
            job: dict(sorted(tasks.items())) for job, tasks in sorted(self._cluster_spec.items())
        }

    @property
    def jobs(self) -> list[str]:
        """The job names, in the order they were given."""
        return list(self._cluster_spec)

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(
                f"No such job in cluster: {job_name!r}; the jobs are {self.jobs}."
            ) from None

    def num_tasks(self, job_name: str) -> int:
        """The number of tasks in ``job_name``.

        Raises:
            ValueError: no such job.
        """
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        """The valid task indices of ``job_name``, ascending.

        Raises:
            ValueError: no such job.
        """
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """The address of task ``task_index`` of ``job_name``.

        Raises:
            ValueError: no such job, or no such task in it.
        """
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(
                f"No task with index {task_index!r} in job {job_name!r}; its task indices "
                f"are {sorted(job)}."
            ) from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Addresses indexed by task id, ``None`` where a sparse job has no such task.

        Raises:
            ValueError: no such job.
        """
        job = self._job(job_name)
        if not job:
            return []
        tasks: list[str | None] = [None] * (max(job) + 1)
        for index, address in job.items():
            tasks[index] = address
        return tasks
