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

MAX_DEVICES_PER_WORKER = 1024  # virtual GPUs one task of the check starts
MAX_TIMEOUT_S = 86400.0  # a day: a check that waits longer is a hang
MAX_TASKS = 1024  # tasks started in one process


@dataclasses.dataclass(frozen=True)
class TaskReport:
    job: str
    index: int
    address: str
    worker: int | None  # worker number in the collective (None: not part of it)
    status: str  # "ok", "not started (...)", or the error
    given: bool = False  # the task named by the TF_CONFIG's "task" part


@dataclasses.dataclass(frozen=True)
class ClusterReport:
    tasks: tuple[TaskReport, ...]
    ok: bool
    detail: str

    def format(self) -> str:
        rows = [("task", "address", "worker", "rendezvous")]
        for t in self.tasks:
            worker = "-" if t.worker is None else str(t.worker)
            name = f"{t.job}:{t.index}" + (" (task)" if t.given else "")
            rows.append((name, t.address, worker, t.status))
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
    config: str | Mapping[str, Any],
    devices_per_worker: int = 1,
    timeout: float = 60.0,
    max_tasks: int | None = MAX_TASKS,
) -> ClusterReport:
    """Validate a cluster and start its chief and worker tasks virtually.

    Args:
        config: a TF_CONFIG (JSON text or dict) or just its ``"cluster"`` part. A
            ``"task"`` part, if any, is validated as MultiWorkerMirroredStrategy validates
            it (a type that is a job of the cluster, an index in range); every task is
            started either way, and the report marks the given one.
        devices_per_worker: virtual GPUs per task (0: CPU).
        timeout: seconds a task may take to reach the rendezvous (finite, > 0).
        max_tasks: the most chief and worker tasks to start in this process (``None``: no
            limit).

    Returns:
        The :class:`ClusterReport` (``ok`` False when a task failed to join).

    Raises:
        ValueError: a malformed cluster (the message says how to fix it); a timeout that is
            not a finite number > 0; more tasks than ``max_tasks``.
        TypeError: ``devices_per_worker`` is not an int.
    """
    import math
    import numbers

    from simdist.sim.launch import cluster_tasks, launch

    if isinstance(devices_per_worker, bool) or not isinstance(devices_per_worker, numbers.Integral):
        raise TypeError(
            f"devices_per_worker must be an int, got {type(devices_per_worker).__name__}"
        )
    if devices_per_worker < 0:
        raise ValueError(f"devices_per_worker must be >= 0, got {devices_per_worker}")
    if not isinstance(timeout, numbers.Real) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")

    parsed = parse_tf_config(config)
    cluster = parsed.get("cluster", parsed if "task" not in parsed else {})
    has_ps = isinstance(cluster, Mapping) and "ps" in cluster
    strategy = "parameter_server" if has_ps else "multi_worker"
    validate_tf_config({"cluster": cluster}, strategy, require_task=False)
    given = None
    if "task" in parsed:
        task = validate_tf_config(
            {"cluster": cluster, "task": parsed["task"]}, strategy, require_task=False
        )
        given = (task.task_type, task.task_id)
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
    if max_tasks is not None and len(tasks) > max_tasks:
        raise ValueError(
            f"the cluster has {len(tasks)} chief and worker tasks, more than the {max_tasks} "
            "this check starts in one process; pass max_tasks=None (--no-size-limit) to start "
            "them anyway"
        )
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
    if given is not None:
        reports = [dataclasses.replace(t, given=(t.job, t.index) == given) for t in reports]
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
    from simdist.cli_args import integer, nonempty, number

    parser.add_argument("--devices-per-worker", type=integer(0, MAX_DEVICES_PER_WORKER), default=1)
    parser.add_argument(
        "--timeout",
        type=number(0, above=True, maximum=MAX_TIMEOUT_S),
        default=60.0,
        help=f"seconds a task may take to reach the rendezvous (0 < T <= {MAX_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--no-size-limit",
        action="store_true",
        help=f"start clusters of more than {MAX_TASKS} tasks",
    )
    real = parser.add_mutually_exclusive_group()
    real.add_argument(
        "--processes",
        action="store_true",
        help="the real transport: every task as a local process on its own address",
    )
    real.add_argument(
        "--task",
        type=nonempty,
        default=None,
        metavar="JOB:INDEX",
        help="the real transport, multi-host: join the rendezvous as this one task",
    )


def _config_text(given: str | None) -> str:
    """The TF_CONFIG text ``given`` names: JSON text, a file holding it, '-' (stdin), or
    ``None`` ($TF_CONFIG). Raises ``argparse.ArgumentTypeError`` for a file that cannot be
    read and for text that is neither JSON nor an existing file."""
    import argparse
    import os
    import sys

    from simdist.cli_args import read_text_file

    if given is None:
        return os.environ.get("TF_CONFIG", "")
    if given == "-":
        return sys.stdin.read()
    if given.lstrip().startswith(("{", "[")) or not given.strip():
        return given
    if os.path.exists(given):
        return read_text_file(given)
    looks_like_a_path = os.sep in given or given.endswith((".json", ".txt", ".cfg"))
    if looks_like_a_path:
        raise argparse.ArgumentTypeError(f"no such file: {given}")
    return given  # JSON text that is not an object: the validator says what is wrong


def run(args) -> int:
    import argparse
    import sys

    try:
        text = _config_text(args.config)
    except argparse.ArgumentTypeError as exc:
        print(f"simdist check-cluster: config: {exc}", file=sys.stderr)
        return 2
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
            from simdist.sim.check_cluster_processes import (
                MAX_PROCESSES,
                check_cluster_processes,
            )

            limit = None if getattr(args, "no_size_limit", False) else MAX_PROCESSES
            report = check_cluster_processes(text, args.devices_per_worker, args.timeout, limit)
        else:
            limit = None if getattr(args, "no_size_limit", False) else MAX_TASKS
            report = check_cluster(text, args.devices_per_worker, args.timeout, limit)
    except ValueError as exc:
        print(f"invalid cluster: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    return 0 if report.ok else 1
