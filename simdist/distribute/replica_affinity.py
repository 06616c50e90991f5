"""Opt-in (``SIMDIST_PIN_REPLICA_THREADS=1``): the replica threads of a run share one CPU.

Only one replica thread runs at a time (the runner hands the turn around), so keeping them
on one CPU costs no parallelism. It was on by default while NumPy's BLAS ran several threads:
Linux often woke the next replica thread on the CPU where a spinning BLAS worker waited, and
its matrix products then ran at half speed. Since simdist holds BLAS to one thread
(``simdist.core.blas_threads``) that cause is gone; what pinning still saves is the hand-over
of the turn between threads (a round trip costs ten times more across CPUs than on one on
the VMs we measure on) and warm caches, and what it costs is that the caller's own thread,
and every thread a replica function starts, cannot leave that CPU for the run when another
process wants it. The figures are in ``docs/performance.md``.

When on, the CPU is the one the caller is on when a run starts. The caller stays on it for
the run; each replica thread is moved there when it gets its first turn; a pooled thread
keeps its CPU until a run wants another, and the caller gets its own CPUs back when the run
ends. Linux only (``sched_setaffinity`` on a thread); elsewhere nothing is pinned. Results
never depend on it.
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
