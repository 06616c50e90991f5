"""Check a cluster with the real transport: its tasks as processes meeting on its own addresses.

``simdist check-cluster --processes CONFIG`` starts every chief and worker task of the
cluster as a local process (:func:`simdist.sim.processes.run_processes`) with its own
``TF_CONFIG``; each listens on the address the cluster gives it, joins the socket
rendezvous, all-reduces its worker index and exchanges its identity, as
:func:`simdist.sim.check_cluster.check_cluster` does with virtual tasks. The addresses must
be on this machine. On a real multi-host cluster run one task per host instead:

    simdist check-cluster --task worker:1 CONFIG     # on the host of worker 1, and so on

and each prints its own row once every task has joined (or the error naming who did not).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Mapping
from typing import Any

from simdist import settings
from simdist.distribute.cluster_resolver.tf_config import parse_tf_config, validate_tf_config
from simdist.sim.check_cluster import ClusterReport, TaskReport, _rendezvous

__all__ = ["check_cluster_processes", "check_one_task"]

_MARK = "simdist-check-cluster-result: "
_LOCAL_NAMES = ("localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1")


def _training(config: str | Mapping[str, Any]) -> dict[str, list[str]]:
    parsed = parse_tf_config(config)
    cluster = parsed.get("cluster", parsed if "task" not in parsed else {})
    validate_tf_config({"cluster": cluster}, "multi_worker", require_task=False)
    return {job: list(cluster[job]) for job in ("chief", "worker") if job in cluster}


def _is_local(address: str) -> bool:
    host = address.split("://", 1)[-1].rpartition(":")[0].strip("[]")
    return host in _LOCAL_NAMES or host.startswith("127.") or host == socket.gethostname()


MAX_PROCESSES = 64  # local processes one check starts; max_tasks=None lifts it


def check_cluster_processes(
    config: str | Mapping[str, Any],
    devices_per_worker: int = 1,
    timeout: float = 60.0,
    max_tasks: int | None = MAX_PROCESSES,
) -> ClusterReport:
    """Start the cluster's chief and worker tasks as local processes; report who joined.

    Raises:
        ValueError: a malformed cluster, or addresses on other hosts (run
            ``simdist check-cluster --task JOB:INDEX`` on each host then); more tasks than
            ``max_tasks``.
    """
    from simdist.sim.processes import run_processes

    cluster = _training(config)
    count = sum(len(addresses) for addresses in cluster.values())
    if max_tasks is not None and count > max_tasks:
        raise ValueError(
            f"the cluster has {count} chief and worker tasks, more than the {max_tasks} local "
            "processes this check starts; pass max_tasks=None (--no-size-limit) to start them "
            "anyway"
        )
    remote = [a for addresses in cluster.values() for a in addresses if not _is_local(a)]
    if remote:
        raise ValueError(
            f"the cluster names other hosts ({', '.join(remote)}): this machine can start only "
            "its own tasks. Run `simdist check-cluster --task JOB:INDEX CONFIG` on each host, "
            "or check the cluster virtually (without --processes)."
        )
    run = run_processes(
        ["-m", "simdist.sim.check_cluster_processes"],
        cluster=cluster,
        devices_per_worker=devices_per_worker,
        env={settings.env_name("worker_timeout"): str(timeout)},
        timeout=timeout + 30,
        grace=min(timeout, 10.0),
    )
    reports, count = [], len(run.tasks)
    for worker, task in enumerate(run.tasks):
        job, index = task.task.split(":")
        address = cluster[job][int(index)]
        found = [line for line in task.stdout.splitlines() if line.startswith(_MARK)]
        if task.returncode == 0 and found:
            result = json.loads(found[-1][len(_MARK) :])
            local = result["replicas"] // count
            agreed = result["sum"] == local * count * (count - 1) // 2
            status = f"ok ({result['replicas']} replicas in sync)" if agreed else "disagreed"
        else:
            last = (task.stderr.strip().splitlines() or ["(no output)"])[-1]
            status = f"FAILED (exit {task.returncode}): {last[:300]}"
        reports.append(TaskReport(job, int(index), address, worker, status))
    ok = all(t.status.startswith("ok") for t in reports)
    detail = "" if ok else "Each failed task's last error line is shown; run it by hand to see all."
    return ClusterReport(tuple(reports), ok, detail)


def check_one_task(config: str | Mapping[str, Any], task: str, timeout: float = 60.0) -> int:
    """Join the real rendezvous as ``task`` (``"worker:1"``) of ``config``; print the row.

    Returns:
        The exit status: 0 when every task joined and agreed, 1 if not.

    Raises:
        ValueError: a malformed cluster or task.
    """
    cluster = _training(config)
    job, _, index = task.partition(":")
    if job not in cluster or not index.isdigit() or int(index) >= len(cluster[job]):
        raise ValueError(f"--task {task!r} is not a chief or worker task of {cluster}")
    os.environ["TF_CONFIG"] = json.dumps(
        {"cluster": cluster, "task": {"type": job, "index": int(index)}}
    )
    os.environ.setdefault(settings.env_name("worker_timeout"), str(timeout))
    settings.reload()
    result = _rendezvous()
    count = sum(len(a) for a in cluster.values())
    local = result["replicas"] // count
    agreed = result["sum"] == local * count * (count - 1) // 2
    print(
        f"{task} at {cluster[job][int(index)]}: worker {result['worker']} of {count}, "
        f"{'ok' if agreed else 'disagreed'} ({result['replicas']} replicas in sync)"
    )
    return 0 if agreed else 1


def _task_main() -> int:
    """One task's process: the rendezvous, then its result on one marked line."""
    result = _rendezvous()
    summary = {k: result[k] for k in ("worker", "sum", "replicas")}
    sys.stdout.write(_MARK + json.dumps(summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_task_main())
