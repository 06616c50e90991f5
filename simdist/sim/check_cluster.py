"""Check a cluster before you have it: start every task of a TF_CONFIG cluster virtually.

:func:`check_cluster` validates the cluster (the fix-it messages of
:func:`~simdist.distribute.cluster_resolver.validate_tf_config`), then starts every chief and
worker task in one process (:func:`simdist.sim.launch`), each with its own ``TF_CONFIG``;
each creates a ``MultiWorkerMirroredStrategy``, all-reduces its worker index and gathers
every task's identity. The report says, per task, whether it joined the rendezvous and
agreed on the cluster. Evaluator tasks run alone (not part of the collectives); a ``ps``
job belongs to ParameterServerStrategy and is reported, not started.

    simdist check-cluster '{"cluster": {"worker": ["host1:2222", "host2:2222"]}}'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from simdist.distribute.cluster_resolver.tf_config import parse_tf_config, validate_tf_config

__all__ = ["TaskReport", "ClusterReport", "check_cluster", "main"]


@dataclasses.dataclass(frozen=True)
class TaskReport:
    job: str
    index: int
    address: str
    worker: int | None  # worker number in the collective (None: not part of it)
    status: str  # "ok", "not started (...)", or the error


@dataclasses.dataclass(frozen=True)
class ClusterReport:
    tasks: tuple[TaskReport, ...]
    ok: bool
    detail: str

    def format(self) -> str:
        rows = [("task", "address", "worker", "rendezvous")]
        for t in self.tasks:
            worker = "-" if t.worker is None else str(t.worker)
            rows.append((f"{t.job}:{t.index}", t.address, worker, t.status))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        verdict = "OK: every training task joined the rendezvous" if self.ok else "FAILED"
        return "\n".join([*lines, "", f"{verdict}. {self.detail}".rstrip()])


def _rendezvous() -> dict:
    """One task's part: join the strategy, all-reduce the worker index, exchange identities."""
    import simdist as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    extended = strategy.extended
    resolver = strategy.cluster_resolver
    index = extended._worker_index
    total = extended._host_reduce(
        tf.distribute.ReduceOp.SUM, [np.array(index, np.int64)] * extended._num_local_replicas
    )
    identities = extended._cross_device_ops_impl.exchange(
        ("identity",), (resolver.task_type, resolver.task_id, resolver.cluster_spec().as_dict())
    )
    return {
        "worker": index,
        "sum": int(total),
        "identities": identities,
        "replicas": strategy.num_replicas_in_sync,
    }


def check_cluster(
    config: str | Mapping[str, Any], devices_per_worker: int = 1, timeout: float = 60.0
) -> ClusterReport:
    """Validate a cluster and start its chief and worker tasks virtually.

    Args:
        config: a TF_CONFIG (JSON text or dict) or just its ``"cluster"`` part; the
            ``"task"`` part, if any, is ignored (every task is started).
        devices_per_worker: virtual GPUs per task (0: CPU).
        timeout: seconds a task may take to reach the rendezvous.

    Returns:
        The :class:`ClusterReport` (``ok`` False when a task failed to join).

    Raises:
        ValueError: a malformed cluster (the message says how to fix it).
    """
    from simdist.sim.launch import cluster_tasks, launch

    parsed = parse_tf_config(config)
    cluster = parsed.get("cluster", parsed if "task" not in parsed else {})
    has_ps = isinstance(cluster, Mapping) and "ps" in cluster
    validate_tf_config(
        {"cluster": cluster}, "parameter_server" if has_ps else "multi_worker", require_task=False
    )
    cluster = {job: list(addresses) for job, addresses in cluster.items()}
    reports: list[TaskReport] = []
    if has_ps:
        for job, addresses in cluster.items():
            for i, address in enumerate(addresses):
                reports.append(TaskReport(job, i, address, None, "not started (ps cluster)"))
        return ClusterReport(
            tuple(reports),
            False,
            "A cluster with a 'ps' job is a ParameterServerStrategy cluster; its workers and "
            "parameter servers are started by that strategy's coordinator, not by a collective "
            "rendezvous.",
        )
    training = {job: cluster[job] for job in ("chief", "worker") if job in cluster}
    tasks = cluster_tasks(training)
    try:
        results = launch(
            _rendezvous,
            cluster=training,
            devices_per_worker=devices_per_worker,
            timeout=timeout,
        )
        failure = None
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        results, failure = None, exc
    count = len(tasks)
    for worker, (job, i) in enumerate(tasks):
        address = cluster[job][i]
        if results is None:
            failed = getattr(failure, "worker_id", None)
            status = (
                f"FAILED: {type(failure).__name__}: {failure}"
                if failed in (None, worker)
                else "stopped (another task failed)"
            )
        else:
            r = results[worker]
            local = r["replicas"] // count  # each replica contributed its worker's index
            agreed = r["sum"] == local * count * (count - 1) // 2 and len(r["identities"]) == count
            status = f"ok ({r['replicas']} replicas in sync)" if agreed else "disagreed"
        reports.append(TaskReport(job, i, address, worker, status))
    for i, address in enumerate(cluster.get("evaluator", ())):
        reports.append(TaskReport("evaluator", i, address, None, "runs alone (no collectives)"))
    ok = results is not None and all(
        t.status.startswith("ok") for t in reports if t.worker is not None
    )
    detail = "" if ok else f"{type(failure).__name__}: {failure}" if failure else ""
    return ClusterReport(tuple(reports), ok, detail)


def main(argv: list[str] | None = None) -> int:
    """``simdist check-cluster CONFIG``: exit 0 when every task joined, 1 if not, 2 if invalid."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="simdist check-cluster", description=__doc__.splitlines()[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(args)


def add_arguments(parser) -> None:
    parser.add_argument(
        "config",
        nargs="?",
        default=None,
        help="TF_CONFIG JSON text, a file holding it, or '-' for stdin (default: $TF_CONFIG)",
    )
    parser.add_argument("--devices-per-worker", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0)
    real = parser.add_mutually_exclusive_group()
    real.add_argument(
        "--processes",
        action="store_true",
        help="the real transport: every task as a local process on its own address",
    )
    real.add_argument(
        "--task",
        default=None,
        metavar="JOB:INDEX",
        help="the real transport, multi-host: join the rendezvous as this one task",
    )


def run(args) -> int:
    import os
    import sys

    text = args.config
    if text is None:
        text = os.environ.get("TF_CONFIG", "")
    elif text == "-":
        text = sys.stdin.read()
    elif os.path.isfile(text):
        with open(text, encoding="utf-8") as f:
            text = f.read()
    if not text.strip():
        print(
            "simdist check-cluster: no cluster given (pass TF_CONFIG JSON or set TF_CONFIG)",
            file=sys.stderr,
        )
        return 2
    try:
        if getattr(args, "task", None):
            from simdist.sim.check_cluster_processes import check_one_task

            return check_one_task(text, args.task, args.timeout)
        if getattr(args, "processes", False):
            from simdist.sim.check_cluster_processes import check_cluster_processes

            report = check_cluster_processes(text, args.devices_per_worker, args.timeout)
        else:
            report = check_cluster(text, args.devices_per_worker, args.timeout)
    except ValueError as exc:
        print(f"invalid cluster: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    return 0 if report.ok else 1
