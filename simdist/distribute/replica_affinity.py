"""All replica threads of one run share one CPU: the one their coordinator is running on.

Only one replica thread runs at a time (the runner hands the turn around), so keeping them
on one CPU costs no parallelism. It matters for the BLAS library's worker threads: when the
turn passes to another replica thread, Linux often wakes that thread on the CPU where a BLAS
worker is waiting, and the next matrix product then runs both halves on one CPU. On the
2-core machines we measure on, that made an epoch of the Fashion-MNIST CNN at 4 virtual replicas
take 28 % longer (``scenarios/bench_training.py``); a single caller thread never pays it.

The CPU is the one the caller is on when a run starts (so two processes rarely share one
for long). The caller itself stays on it for the run, so every hand-over of the turn wakes a
thread on the CPU it is already on: across CPUs a hand-over costs ten times more here (a
round trip between two threads: 72 us across the two CPUs of this VM, 6 us on one). Each
replica thread is moved there when it gets its first turn; a pooled thread keeps its CPU
until a run wants another (threads a replica function starts inherit it), and the caller
gets its own CPUs back when the run ends. Linux only (``sched_setaffinity`` on a thread);
elsewhere, or with ``SIMDIST_PIN_REPLICA_THREADS=0``, nothing is pinned. Results never
depend on it.
"""

from __future__ import annotations

import os

from simdist import settings

__all__ = ["run_cpu", "pin_caller", "repin", "restore_caller"]

_SUPPORTED = hasattr(os, "sched_setaffinity") and os.path.exists("/proc/thread-self/stat")
_PROCESS_CPUS = frozenset(os.sched_getaffinity(0)) if _SUPPORTED else frozenset()


def _enabled() -> bool:
    return settings.get().pin_replica_threads and _SUPPORTED and len(_PROCESS_CPUS) > 1


def _current_cpu() -> int | None:
    """The CPU this thread runs on (field 39 of ``/proc/thread-self/stat``), or None."""
    try:
        with open("/proc/thread-self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[36])  # fields[0] is field 3 (the state)
    except (OSError, ValueError, IndexError):
        return None


def run_cpu() -> frozenset[int] | None:
    """The CPU set for the replica threads of a run starting now (the caller's current CPU),
    or None (do not pin)."""
    if not _enabled():
        return None
    cpu = _current_cpu()
    return frozenset((cpu,)) if cpu in _PROCESS_CPUS else None


def pin_caller(cpus: frozenset[int] | None):
    """Keep the calling thread (the run's coordinator) on ``cpus`` for the run; returns what
    :func:`restore_caller` needs. ``cpus`` is the CPU it is on, so it does not move."""
    if cpus is None:
        return None
    try:
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)
    except OSError:
        return None
    return saved


def restore_caller(saved) -> None:
    """Give the coordinator back the CPUs it had before :func:`pin_caller`."""
    if saved is not None:
        try:
            os.sched_setaffinity(0, saved)
        except OSError:
            pass


def repin(current: frozenset[int] | None, wanted: frozenset[int] | None):
    """Move the calling thread from the CPUs it is pinned to (``current``; None: every CPU
    of the process) to ``wanted``; returns what it is pinned to now. A pooled replica
    thread keeps its CPU between runs, so a run on the same CPU makes no system call."""
    if wanted == current:
        return current
    try:
        os.sched_setaffinity(0, _PROCESS_CPUS if wanted is None else wanted)
    except OSError:  # the CPU went offline, or a cgroup forbids it: run unpinned
        return current
    return wanted
