"""Handing the turn to a sleeping thread: it wakes on the CPU of the thread that hands it over.

Only one thread of a ``strategy.run`` computes at a time: the coordinator (the caller's
thread) hands the turn to a replica thread and sleeps; the replica runs until a collective
and hands the turn back. Left to itself, Linux often wakes the sleeper on the *other* CPU
(the waker's CPU is busy at the moment of the wake-up, the other one idle), and on the
virtual machines we measure on a wake-up across CPUs costs an inter-processor interrupt and
the idle CPU's exit from its halt: a lock ping-pong round trip took 120-250 us across two
CPUs against 9 us on one (``scenarios/bench_replica_overhead.py``). A 4-replica step hands
the turn about 30 times.

So the waker first restricts the sleeper to the CPU the waker runs on (one
``sched_setaffinity`` on the sleeper's thread id), then releases it and goes to sleep
itself; the sleeper wakes on that CPU, where nothing else of the process runs now, and at
once gives itself back the CPUs it had (a second ``sched_setaffinity``). A round trip then
costs about 10 us. Unlike pinning a run's threads to one CPU for the whole run (what
``SIMDIST_PIN_REPLICA_THREADS=1`` did until this module replaced it), no thread is held on
a CPU while it runs: the scheduler may move a running replica, the caller, the intra-op
helpers and any thread a replica function starts wherever it likes.

``SIMDIST_REPLICA_HANDOVER``: ``same-cpu`` (the default) or ``any`` (no affinity calls:
the OS places every wake-up). Linux only; elsewhere, and wherever the system refuses the
call (a cgroup, a CPU taken offline), the OS places the wake-up. Results never depend on it:
the turn order is the runner's, not the scheduler's.

A sleeper that will not wait again (the caller's thread once its run has returned) is
closed (``close``): a waker that comes late (a replica stuck past the run's deadline that wakes
and finishes) then leaves it where it runs, and a move that races with the close is
undone, so no thread is left restricted to one CPU after a run.
"""

from __future__ import annotations

import ctypes
import os
import threading

from simdist import settings

__all__ = ["Sleeper", "supported"]


def _load_getcpu():
    """glibc's (or musl's) ``sched_getcpu``: the CPU the calling thread runs on, from the
    vDSO or rseq, without a system call; None where there is none."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        getcpu = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    getcpu.restype = ctypes.c_int
    getcpu.argtypes = []
    return getcpu if getcpu() >= 0 else None


_getcpu = _load_getcpu()
_ONE_CPU: dict[int, tuple[int]] = {}  # cpu -> (cpu,), built as CPUs are seen


def supported() -> bool:
    """Whether wake-ups can be placed here (Linux with ``sched_getcpu``)."""
    return _getcpu is not None


def _enabled() -> bool:
    return _getcpu is not None and settings.get().replica_handover == "same-cpu"


class Sleeper:
    """A thread that sleeps until it is handed the turn.

    ``tid`` is its native thread id (default: the calling thread's); ``cpus`` are the CPUs
    it gets back when it wakes (default: the ones the calling thread may run on now, which
    a thread it starts inherits).
    """

    __slots__ = ("tid", "cpus", "moved", "closed")

    def __init__(self, tid: int | None = None, cpus: frozenset[int] | None = None) -> None:
        self.tid = threading.get_native_id() if tid is None else tid
        if cpus is None:
            cpus = frozenset(os.sched_getaffinity(0)) if _getcpu is not None else frozenset()
        self.cpus = cpus
        self.moved = False  # a waker restricted it to its CPU; undone when it wakes
        self.closed = False  # it waits no more: wakers leave it alone

    def move_here(self) -> None:
        """Called by the waker just before it releases this sleeper."""
        if self.closed or len(self.cpus) < 2 or not _enabled():
            return
        cpu = _getcpu()
        if cpu not in self.cpus:  # the waker runs where the sleeper may not: leave it
            return
        one = _ONE_CPU.get(cpu)
        if one is None:
            one = _ONE_CPU.setdefault(cpu, (cpu,))
        try:
            os.sched_setaffinity(self.tid, one)
        except OSError:  # the thread is gone, or a cgroup forbids it: the OS places it
            return
        self.moved = True
        if self.closed:  # closed meanwhile (after the check above): undo the move here
            self._give_back(self.tid)

    def woken(self) -> None:
        """Called by the sleeper itself when it wakes: its CPUs back, if a waker moved it."""
        if self.moved:
            self._give_back(0)

    def close(self) -> None:
        """Called by the sleeper itself when it will not wait again: its CPUs back now, and
        no waker moves it any more (one that is moving it at this instant undoes it)."""
        self.closed = True
        if self.moved:
            self._give_back(0)

    def _give_back(self, tid: int) -> None:
        self.moved = False
        try:
            os.sched_setaffinity(tid, self.cpus)
        except OSError:  # a CPU went offline meanwhile, or the thread is gone
            pass
