"""Chief election and worker numbering in a cluster, by TF's ``multi_worker_util`` rules.

The chief is task 0 of the ``"chief"`` job when the cluster has one, else worker 0.
The evaluator is a chief of its own (it runs apart from training). Workers are numbered
with the chief first: ``id_in_cluster`` is 0 for the chief and ``index + 1`` for workers
when there is a chief job, ``index`` otherwise.

>>> chief_task({"worker": ["w0:1", "w1:1"]})
('worker', 0)
>>> is_chief({"chief": ["c:1"], "worker": ["w0:1"]}, "worker", 0)
False
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec
from simdist.distribute.cluster_resolver.tf_config import check_task

__all__ = ["chief_task", "id_in_cluster", "is_chief", "normalize_cluster_spec", "worker_count"]


def normalize_cluster_spec(cluster_spec: ClusterSpec | Mapping[str, Any]) -> ClusterSpec:
    """A ``ClusterSpec`` from a ``ClusterSpec`` or a dict.

    Raises:
        ValueError: anything else.
    """
    if isinstance(cluster_spec, ClusterSpec):
        return cluster_spec
    if isinstance(cluster_spec, Mapping):
        return ClusterSpec(cluster_spec)
    raise ValueError(
        f"cluster_spec must be a dict or a tf.train.ClusterSpec, got {type(cluster_spec).__name__}."
    )


def _checked(
    cluster_spec: ClusterSpec | Mapping[str, Any], task_type: str, task_id: int
) -> ClusterSpec:
    spec = normalize_cluster_spec(cluster_spec)
    check_task(spec, task_type, task_id, source="cluster")
    for job in ("chief", "evaluator"):
        if job in spec.jobs and spec.num_tasks(job) > 1:
            raise ValueError(
                f'The cluster has {spec.num_tasks(job)} "{job}" tasks; there must be at most '
                f'one. Keep one address under "{job}".'
            )
    return spec


def chief_task(cluster_spec: ClusterSpec | Mapping[str, Any]) -> tuple[str, int] | None:
    """The (task type, task id) of the training chief, or None if there is no chief or worker.

    Returns:
        ``("chief", i)`` for the chief job's task when there is one, else ``("worker", i)``
        for the lowest worker index.
    """
    spec = normalize_cluster_spec(cluster_spec)
    for job in ("chief", "worker"):
        if job in spec.jobs and spec.num_tasks(job):
            return job, spec.task_indices(job)[0]
    return None


def is_chief(cluster_spec: ClusterSpec | Mapping[str, Any], task_type: str, task_id: int) -> bool:
    """Whether the task is the chief: the chief task, the evaluator, or worker 0 with no chief.

    Raises:
        ValueError: the task is not in the cluster, or the cluster has several chiefs or
            evaluators.
    """
    spec = _checked(cluster_spec, task_type, task_id)
    if task_type in ("chief", "evaluator"):
        return True
    return task_type == "worker" and task_id == 0 and "chief" not in spec.jobs


def worker_count(cluster_spec: ClusterSpec | Mapping[str, Any], task_type: str) -> int:
    """The number of training workers (chief included), or of evaluators for the evaluator.

    Raises:
        ValueError: ``task_type`` is ``"ps"`` or not in the cluster.
    """
    spec = normalize_cluster_spec(cluster_spec)
    first = spec.task_indices(task_type)[0] if task_type in spec.jobs else 0
    _checked(spec, task_type, first)
    if task_type == "evaluator":
        return spec.num_tasks("evaluator")
    if task_type not in ("chief", "worker"):
        raise ValueError(
            f"worker_count is for chief, worker or evaluator tasks, not {task_type!r}."
        )
    return sum(spec.num_tasks(job) for job in ("chief", "worker") if job in spec.jobs)


def id_in_cluster(
    cluster_spec: ClusterSpec | Mapping[str, Any], task_type: str, task_id: int
) -> int:
    """The worker number of a task in [0, worker_count): the chief is 0, workers follow.

    Raises:
        ValueError: the task is not in the cluster, or is a ``"ps"`` task (which has none).
    """
    spec = _checked(cluster_spec, task_type, task_id)
    if task_type == "chief":
        return 0
    if task_type == "worker":
        return task_id + (spec.num_tasks("chief") if "chief" in spec.jobs else 0)
    if task_type == "evaluator":
        return task_id
    raise ValueError(
        f"There is no worker id for task type {task_type!r}; only chief, worker "
        "and evaluator tasks have one."
    )
