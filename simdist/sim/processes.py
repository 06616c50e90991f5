"""Start a cluster's tasks as real local processes, one per ``TF_CONFIG``, and wait for them.

In the spirit of TensorFlow's ``multi_process_runner``: :func:`run_processes` picks free
loopback ports, writes each task's ``TF_CONFIG`` (the chief and workers of one cluster), a
fresh random ``SIMDIST_JOB_KEY`` shared by the job's tasks only, and starts
``python <argv...>`` once per task. The processes find each other through the socket
transport (:mod:`simdist.backends.sockets`) exactly as tasks started by hand in separate
shells do. When one task fails, the others stop on their own (they are told, or see the
closed connection); any still running after ``grace`` seconds are killed, and so is the
whole job at ``timeout``, so a call always returns.

    result = run_processes(["train.py", "--epochs", "2"], workers=2)
    result.check()            # raises ProcessClusterError naming the failed task
    print(result.tasks[0].stdout)

Also a command: ``python -m simdist.sim.processes -n 2 train.py --epochs 2``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

from simdist import settings
from simdist.backends import process_env

__all__ = ["TaskRun", "ClusterRun", "ProcessClusterError", "free_ports", "run_processes", "main"]


@dataclasses.dataclass(frozen=True)
class TaskRun:
    """One task's process: ``task`` is ``"chief:0"`` or ``"worker:1"``; ``returncode`` is
    negative when the process was killed by a signal (``-9``: by this runner)."""

    task: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    killed: str = ""  # why this runner killed it ("" when it ended on its own)


class ProcessClusterError(RuntimeError):
    """A task of a process cluster failed; ``task`` names the first that did."""

    def __init__(self, message: str, task: str) -> None:
        super().__init__(message)
        self.task = task


@dataclasses.dataclass(frozen=True)
class ClusterRun:
    """Every task's :class:`TaskRun`, in worker order (the chief first)."""

    tasks: tuple[TaskRun, ...]
    cluster: dict

    @property
    def ok(self) -> bool:
        return all(t.returncode == 0 for t in self.tasks)

    def failures(self) -> list[TaskRun]:
        """The tasks that exited nonzero, those that ended on their own first."""
        return sorted(
            (t for t in self.tasks if t.returncode != 0), key=lambda t: (bool(t.killed), t.seconds)
        )

    def check(self) -> ClusterRun:
        """``self`` when every task exited 0.

        Raises:
            ProcessClusterError: naming the failed tasks, each with its last error line (a
                task's error names the worker that caused it, where that is another).
        """
        failed = self.failures()
        if not failed:
            return self
        lines = []
        for task in failed:
            last = (task.stderr.strip().splitlines() or ["(no output)"])[-1]
            why = f", {task.killed}" if task.killed else ""
            lines.append(f"  {task.task} (exit {task.returncode}{why}): {last[:400]}")
        raise ProcessClusterError(
            f"{len(failed)} of {len(self.tasks)} tasks of the process cluster failed:\n"
            + "\n".join(lines),
            failed[0].task,
        )


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` TCP ports free on ``host`` now (the system's choice; another program may
    still take one before the tasks bind it)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def run_processes(
    argv: Sequence[str],
    workers: int = 2,
    *,
    chief: bool = False,
    devices_per_worker: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    grace: float = 10.0,
    host: str = "127.0.0.1",
    job_key: str | None = None,
    cluster: Mapping[str, Sequence[str]] | None = None,
) -> ClusterRun:
    """Run ``python *argv`` as every task of a local cluster; return when all have ended.

    Args:
        argv: the script (or ``-m module``) and its arguments.
        workers: worker tasks (``worker:0`` ...).
        chief: add a ``chief:0`` task (worker 0 of the collective then).
        devices_per_worker: ``SIMDIST_VIRTUAL_GPUS`` of each task (``None``: inherited).
        env: variables added to each task's environment.
        timeout: seconds the whole job may take; tasks still running then are killed.
        grace: seconds the other tasks get to stop on their own after one fails.
        host: the loopback address the tasks listen on.
        job_key: the job's ``SIMDIST_JOB_KEY`` (default: a fresh random secret).
        cluster: the chief and worker addresses to use (``workers``, ``chief`` and ``host``
            are then ignored); default: free ports on ``host``.

    Raises:
        ValueError: no task, or a negative device count.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be an int >= 0, got {workers!r}")
    if cluster is not None:
        cluster = {job: list(cluster[job]) for job in ("chief", "worker") if job in cluster}
        names = [(job, i) for job, addresses in cluster.items() for i in range(len(addresses))]
    else:
        names = [("chief", 0)] if chief else []
        names += [("worker", i) for i in range(workers)]
    if not names:
        raise ValueError("a process cluster needs at least one chief or worker task")
    if devices_per_worker is not None and devices_per_worker < 0:
        raise ValueError(f"devices_per_worker must be >= 0, got {devices_per_worker}")
    if cluster is None:
        ports = free_ports(len(names), host)
        cluster = {}
        for (job, _), port in zip(names, ports, strict=True):
            cluster.setdefault(job, []).append(f"{host}:{port}")
    key = job_key or secrets.token_hex(16)
    started, procs, files = time.monotonic(), [], []
    for job, index in names:
        task_env = process_env.with_blas_threads({**os.environ, **(env or {})})
        task_env["TF_CONFIG"] = json.dumps(
            {"cluster": cluster, "task": {"type": job, "index": index}}
        )
        task_env[settings.env_name("job_key")] = key
        if devices_per_worker is not None:
            task_env[settings.env_name("virtual_gpus")] = str(devices_per_worker)
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        files.append((out, err))
        procs.append(
            subprocess.Popen(
                [sys.executable, *argv],
                env=task_env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )
        )
    ended: dict[int, float] = {}
    killed: dict[int, str] = {}
    failed_at = None
    while len(ended) < len(procs):
        now = time.monotonic()
        for i, proc in enumerate(procs):
            if i not in ended and proc.poll() is not None:
                ended[i] = now - started
                if proc.returncode != 0 and failed_at is None:
                    failed_at = now
        for i, proc in enumerate(procs):
            if i in ended:
                continue
            reason = ""
            if now - started > timeout:
                reason = f"killed: the job ran past its {timeout:g} s"
            elif failed_at is not None and now - failed_at > grace:
                reason = f"killed: still running {grace:g} s after another task failed"
            if reason:
                proc.kill()
                proc.wait()
                killed[i], ended[i] = reason, time.monotonic() - started
        time.sleep(0.02)
    runs = []
    for i, ((job, index), proc, (out, err)) in enumerate(zip(names, procs, files, strict=True)):
        out.seek(0)
        err.seek(0)
        runs.append(
            TaskRun(
                f"{job}:{index}",
                proc.returncode,
                out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"),
                ended[i],
                killed.get(i, ""),
            )
        )
        out.close()
        err.close()
    return ClusterRun(tuple(runs), cluster)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simdist.sim.processes [-n N] [--chief] script.py args...``: run the tasks,
    print each one's output under a header, exit 0 when all exited 0, else 1."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m simdist.sim.processes", description=__doc__.splitlines()[0]
    )
    parser.add_argument("-n", "--workers", type=int, default=2)
    parser.add_argument("--chief", action="store_true", help="add a chief:0 task")
    parser.add_argument("--devices-per-worker", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("argv", nargs=argparse.REMAINDER, help="the script and its arguments")
    args = parser.parse_args(argv)
    if not args.argv:
        parser.error("give the script to run")
    result = run_processes(
        args.argv,
        args.workers,
        chief=args.chief,
        devices_per_worker=args.devices_per_worker,
        timeout=args.timeout,
    )
    for task in result.tasks:
        status = f"exit {task.returncode}" + (f", {task.killed}" if task.killed else "")
        print(f"=== {task.task} ({status}, {task.seconds:.1f} s) ===")
        sys.stdout.write(task.stdout)
        sys.stderr.write(task.stderr)
    try:
        result.check()
    except ProcessClusterError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
