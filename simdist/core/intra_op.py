"""Intra-op parallelism: an op's fixed blocks of work shared out among simdist's own threads.

An op that cuts its work into blocks (a convolution's batch, a few images per block) calls
``run_blocks(count, fn)``: ``fn(i)`` runs once for every block ``i``, on the calling thread
and on up to ``threads - 1`` helper threads, each taking the next block nobody has taken
yet. Why not NumPy's BLAS threads (``blas_threads`` holds them to one):

* **Same bits on any machine.** The blocks are the op's own, chosen from the shapes alone;
  each block writes its own slice of the result, and a sum over blocks is added up by the
  op afterwards, in block order. Which thread ran which block, and how many threads there
  were, changes nothing: one thread, two, or sixteen give the same bits.
* **Busy machines.** Blocks are claimed one at a time, so a helper that the OS does not
  schedule (another process has its core) claims nothing and the others do its share; a
  preempted helper delays the op by at most the one block it holds. OpenBLAS instead cuts a
  product into one fixed piece per thread and waits for the slowest.

**When the helpers are woken.** Only for blocks holding at least ``MIN_SHARED_FLOPS`` of
arithmetic (the caller says how much, ``block_flops``); smaller blocks run on the calling
thread alone. Every NumPy call of a block releases the GIL and takes it back, and with two
threads working each take may hand the GIL across CPUs, which on the virtual machines we
measure on costs about as much as a cross-CPU wake-up (60-250 us). A matrix product of
tens of MFLOP per block pays for that many times over (the tutorial CNN's second
convolution: forward and backward 17 -> 9.7 ms on two threads); a block of element-wise
passes or a product of one or two MFLOP does not (its max pooling 4.4 -> 6.4 ms, its first
convolution 4.1 -> 5.9 ms on two threads; ``scenarios/bench_core.py``).

The helpers only run block functions, which hold NumPy calls that release the GIL (matrix
products, copies, element-wise ufuncs). ``run_blocks`` called while another call is running
(a helper's block, or a second Python thread of the user's) runs its blocks on the calling
thread alone: same bits, no deadlock. The thread count is ``SIMDIST_INTRA_OP_THREADS``
(default: the CPUs this process may run on), or :func:`set_intra_op_threads`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from simdist import settings
from simdist.core import blas_buffers

__all__ = ["intra_op_threads", "items_per_block", "run_blocks", "set_intra_op_threads"]


def intra_op_threads_from_environment() -> int:
    """``SIMDIST_INTRA_OP_THREADS`` (read by :mod:`simdist.settings`); 0 or unset: the CPUs
    this process may run on."""
    threads = settings.get().intra_op_threads
    if threads:
        return threads
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(cpus) if cpus else (os.cpu_count() or 1)


class _Job:
    """One ``run_blocks`` call: the next block to claim, and how many blocks are finished.

    Helpers are opportunistic: the caller works on the job too, and waits only for blocks
    that a helper has claimed and not finished, never for a helper that has not started.
    """

    __slots__ = ("fn", "count", "next", "finished", "lock", "done", "error")

    def __init__(self, fn: Callable[[int], None], count: int) -> None:
        self.fn = fn
        self.count = count
        self.next = 0  # the next block to claim
        self.finished = 0  # blocks run (or skipped after an error)
        self.lock = threading.Lock()  # guards next, finished, error
        self.done = threading.Event()  # set when every block is finished
        self.error: BaseException | None = None

    def work(self) -> None:
        """Claim and run blocks until none is left to claim."""
        while True:
            with self.lock:
                block = self.next
                if block >= self.count:
                    return
                self.next = block + 1
                skip = self.error is not None
            if not skip:
                try:
                    self.fn(block)
                except BaseException as exc:  # noqa: BLE001 - raised again by run_blocks
                    with self.lock:
                        if self.error is None:
                            self.error = exc
            with self.lock:
                self.finished += 1
                if self.finished == self.count:
                    self.done.set()


_PROCESS_CPUS = os.sched_getaffinity(0) if hasattr(os, "sched_setaffinity") else None


class _Helper:
    """A daemon thread that works on the latest job it was handed, when the OS runs it.

    It may run on every CPU of the process, even when the thread that started it was
    restricted to one (for an instant, a woken replica thread is: ``distribute.handover``).
    """

    def __init__(self) -> None:
        self._wake = threading.Semaphore(0)
        self._job: _Job | None = None
        threading.Thread(target=self._loop, name="simdist-intra-op", daemon=True).start()

    def hand(self, job: _Job) -> None:
        self._job = job
        self._wake.release()

    def forget(self, job: _Job) -> None:
        if self._job is job:
            self._job = None

    def _loop(self) -> None:
        if _PROCESS_CPUS:
            try:
                os.sched_setaffinity(0, _PROCESS_CPUS)
            except OSError:  # a CPU went offline, or a cgroup forbids it: keep what we have
                pass
        while True:
            self._wake.acquire()
            job = self._job  # a job handed late may be over already: work() returns at once
            if job is not None:
                job.work()


_threads: int | None = None  # None: read the environment on first use
_helpers: list[_Helper] = []
_busy = threading.Lock()  # held while a job runs: a nested or concurrent call runs alone


def set_intra_op_threads(threads: int) -> None:
    """Run each parallel op on ``threads`` threads (the caller and ``threads - 1`` helpers).

    Results do not depend on it (see the module docstring); ``1`` runs every op on the
    calling thread alone.

    Raises:
        ValueError: ``threads`` is not a positive integer.
    """
    global _threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"intra-op threads must be a positive integer, got {threads!r}.")
    _threads = threads


def intra_op_threads() -> int:
    """How many threads a parallel op runs on (``SIMDIST_INTRA_OP_THREADS`` until set)."""
    global _threads
    if _threads is None:
        _threads = intra_op_threads_from_environment()
    return _threads


MIN_SHARED_FLOPS = 10e6
"""Blocks with less arithmetic than this run on the calling thread alone: about 0.1 ms of
one core's float32 GEMM (98 GFLOP/s on our VMs), the order of what a GIL hand-over across
CPUs costs there (module docstring)."""


def run_blocks(count: int, fn: Callable[[int], None], block_flops: float | None = None) -> None:
    """Call ``fn(i)`` once for each ``i`` in ``range(count)``, on up to
    :func:`intra_op_threads` threads; return when all have returned.

    ``fn`` must write only its own block's part of the result. If a call raises, blocks not
    yet started are skipped and the first exception is raised here. ``block_flops``, the
    arithmetic of one block (None: a lot), below :data:`MIN_SHARED_FLOPS` keeps the blocks
    on the calling thread. The result is the same bits either way.
    """
    workers = min(intra_op_threads(), count)
    if block_flops is not None and block_flops < MIN_SHARED_FLOPS:
        workers = 1
    if workers <= 1 or not _busy.acquire(blocking=False):
        for block in range(count):
            fn(block)
        return
    try:
        if len(_helpers) < workers - 1:
            blas_buffers.map_buffers(workers)  # a packing buffer for each thread's products
            while len(_helpers) < workers - 1:
                _helpers.append(_Helper())
        job = _Job(fn, count)
        for helper in _helpers[: workers - 1]:
            helper.hand(job)
        job.work()
        job.done.wait()
        for helper in _helpers[: workers - 1]:
            helper.forget(job)  # a helper that never woke must not keep the job's arrays
    finally:
        _busy.release()
    if job.error is not None:
        raise job.error


def items_per_block(item_size: int, block_size: int) -> int:
    """How many items (images) of ``item_size`` elements (rows, floats) make one block of
    about ``block_size``: at least one. A function of the shapes alone, never of the
    thread count, so the blocks (and the bits) are the same on every machine."""
    return max(1, block_size // max(1, item_size))


def _forget_after_fork() -> None:
    # A forked child has none of the helper threads, and the lock may be held.
    global _busy
    _helpers.clear()
    _busy = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
