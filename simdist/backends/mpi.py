"""The MPI transport: the workers of a cluster as real processes under ``mpiexec``.

One process per worker; the worker index is the process's rank in the communicator
(``MPI.COMM_WORLD`` unless another is given). :meth:`MPITransport.run_plan` executes a
collective :class:`~simdist.collectives.plan.Plan` *distributed*: each process keeps
working buffers only for the plan ranks it owns; a move between two of its own ranks is a
memory operation, a move to or from another process's rank is a message (nonblocking
``Isend``/``Irecv`` of raw bytes, no pickling). Each step reads its sources as they were
before the step and applies the moves into each destination in listed order, with the
same ``ufunc(destination, received)`` per element as
:func:`simdist.collectives.executor.run_plan`, so every rank's result is bit-identical to
the one-process run on the gathered inputs (``native_allreduce=True`` trades that promise
for MPI's own ``Allreduce``).

mpi4py is imported here only, on first use (``pip install 'simdist[mpich]'`` brings it
with an MPI runtime; ``pip install 'simdist[mpi]'`` brings mpi4py alone for a cluster's own
MPI).

No hangs: every wait (the control plane's point-to-point exchange on a second private
communicator, the data plane's requests) polls with the deadline
(``CommunicationOptions.timeout_seconds``, else ``SIMDIST_WORKER_TIMEOUT``) and watches the
peers' processes on this host; a late worker raises ``DeadlineExceededError``, a vanished one
``WorkerFailedError``, a worker that left its program ``CollectiveMismatchError``, each naming
the worker. A rank whose exception is not caught aborts the job (``MPI_Abort``) instead of
hanging in ``MPI_Finalize``, at exit the ranks say goodbye
(:mod:`simdist.backends.exit_guard`; :mod:`simdist.backends.mpi_job` for
``run_worker_main``), and a rank that ends without either (``os._exit``, a signal) is named
by its sentinel, which aborts the job (:mod:`simdist.backends.mpi_sentinel`).
"""

from __future__ import annotations

import collections
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist import errors
from simdist.backends import (
    exit_guard,
    mpi_guard,
    mpi_sentinel,
    peer_errors,
    plan_program,
    process_env,
)
from simdist.backends.base import Transport
from simdist.backends.mpi_job import (  # the job-level helpers, re-exported here
    INSTALL_HINT,
    _flush_before_abort,
    check_world_size,
    import_mpi,
    run_worker_main,
)
from simdist.backends.mpi_watch import MPIWatch
from simdist.collectives.plan import Plan

__all__ = ["INSTALL_HINT", "MPITransport", "check_world_size", "import_mpi", "run_worker_main"]

_ALIGN = 64  # bytes: receive buffers start on cache-line boundaries
_HISTORY = 8  # cross-worker calls remembered for error messages


class MPITransport(Transport):
    """One worker's connection to the others over MPI (one process per worker).

    Messages travel on a private duplicate of ``comm``, so they never meet the
    application's own MPI traffic. Every worker must call the methods in the same order
    (collective semantics). The workers' plan ranks are exchanged once per distinct
    ``(plan.num_ranks, ranks)`` and cached: for a given plan size a worker may change its
    ranks only in a call where every worker changes its own (a cluster's layout is fixed,
    so this holds for the strategies).

    Args:
        comm: the communicator of the cluster's workers (default ``MPI.COMM_WORLD``).
        native_allreduce: all-reduce plans with ``np.add`` / ``maximum`` / ``minimum`` /
            ``multiply`` on a dtype MPI knows use ``comm.Allreduce`` (each process first
            combines its own ranks' inputs in rank order). Faster; results are then NOT
            promised bit-identical to the virtual run (MPI chooses the order of additions).

    Raises:
        ImportError: mpi4py is missing (see :data:`INSTALL_HINT`).
        RuntimeError: the processes did not form one world (:func:`check_world_size`).
    """

    def __init__(
        self, comm=None, *, native_allreduce: bool = False, timeout: float | None = None
    ) -> None:
        MPI = import_mpi()
        library = " ".join(MPI.Get_library_version().split("\n")[0].split())
        check_world_size(os.environ, MPI.COMM_WORLD.Get_size(), library)
        self._MPI = MPI
        self._parent = MPI.COMM_WORLD if comm is None else comm
        self._comm = self._parent.Dup()
        self._ctrl = self._parent.Dup()
        self._rank = self._comm.Get_rank()
        self._size = self._comm.Get_size()
        self._native = bool(native_allreduce)
        tag_ub = self._comm.Get_attr(MPI.TAG_UB)
        self._tags = int(tag_ub if tag_ub is not None else 32767) + 1
        self._owners: dict[tuple, tuple[dict[int, int], tuple[int, ...]]] = {}
        self._programs: dict[tuple, tuple] = {}
        self._scratch = np.empty(0, dtype=np.uint8)
        self._ops = {
            np.add: MPI.SUM,
            np.maximum: MPI.MAX,
            np.minimum: MPI.MIN,
            np.multiply: MPI.PROD,
        }
        self._timeout = process_env.worker_timeout(timeout)
        self._calls = 0
        self._history: collections.deque[str] = collections.deque(maxlen=_HISTORY)
        self._failure: BaseException | None = None
        self._watch = MPIWatch(MPI, self._ctrl, self._timeout)
        mpi_sentinel.start(self._rank, self._size)  # from here on, a goodbye is due
        exit_guard.install(self)
        mpi_guard.report("joined")

    @property
    def num_workers(self) -> int:
        return self._size

    @property
    def worker_index(self) -> int:
        return self._rank

    @property
    def comm(self):
        """The transport's private communicator (a duplicate of the one given)."""
        return self._comm

    def all_gather_object(self, obj: Any, label: str = "", timeout: float | None = None) -> list:
        self._check_usable()
        timeout = self._timeout if timeout is None else float(timeout)
        call = self._calls
        self._calls += 1
        waiting_in = f"cross-worker call {call + 1} ({label or 'exchange'})"
        self._history.append(label or "exchange")
        mpi_sentinel.call(self._calls, label or "exchange")
        gathered = self._gather(("call", call, label, obj), waiting_in, timeout)
        for peer, message in enumerate(gathered):
            if peer == self._rank:
                continue
            error = self._interpret(peer, message, waiting_in)
            well_formed = isinstance(message, tuple) and len(message) == 4
            if error is None and (not well_formed or message[:2] != ("call", call)):
                what = f"a {message[0]!r} message" if isinstance(message, tuple) else "garbage"
                error = peer_errors.out_of_step(peer, what, self._rank, waiting_in)
            if error is not None:
                raise self._fail(error)
        return [message[3] for message in gathered]

    def barrier(self) -> None:
        self.all_gather_object(None, "barrier")

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._comm is None:
            raise RuntimeError("this worker's MPI transport is closed (the program has ended)")

    def _fail(self, error: BaseException) -> BaseException:
        if self._failure is None:
            self._failure = error
        return error

    def _interpret(self, peer: int, message, waiting_in: str):
        kind = message[0] if isinstance(message, tuple) and message else None
        if kind == "abort" and len(message) == 4:
            return peer_errors.from_abort(peer, str(message[2]), str(message[3]), self._rank)
        if kind == "bye" and len(message) == 3:
            histories = {self._rank: list(self._history), peer: list(message[2])}
            return peer_errors.left_program(
                peer, int(message[1]), self._rank, waiting_in, histories
            )
        return None

    def _gather(self, message, waiting_in: str, timeout: float) -> list:
        try:
            return self._watch.gather(message, waiting_in, timeout)
        except (errors.OpError, ValueError) as exc:  # a late, dead or garbling peer
            raise self._fail(exc) from None

    def _peers(self) -> list[int]:
        return self._watch.peers()

    def _wait(self, requests, receive_peers, waiting_in, timeout) -> list:
        try:
            return self._watch.wait(requests, receive_peers, waiting_in, timeout)
        except errors.OpError as exc:  # a late or dead peer
            raise self._fail(exc) from None

    def abort(self, message: str) -> None:
        sys.stderr.write(f"simdist: worker {self._rank} of {self._size} aborts: {message}\n")
        mpi_sentinel.report("abort")
        _flush_before_abort()
        self._parent.Abort(1)

    def abort_quietly(self, message: str, kind: str = "WorkerFailedError") -> None:
        """End the whole MPI job (``MPI_Abort``), after saying which worker failed and why."""
        sys.stderr.write(
            f"simdist: worker {self._rank} of {self._size} failed with {kind}: {message}\n"
            f"simdist: aborting the MPI job (all {self._size} workers)\n"
        )
        mpi_sentinel.report("abort")
        _flush_before_abort()
        self._parent.Abort(1)

    def finish(self, timeout: float | None = None) -> None:
        """Say goodbye to every worker at the end of the program.

        A peer still running at the deadline without a call (a chief saving a model while the
        workers leave) is not an error: a call it makes later meets the goodbye, and
        ``MPI_Finalize`` waits for it as MPI does.

        Raises:
            CollectiveMismatchError: a worker still waits in a cross-worker call.
            WorkerFailedError, DeadlineExceededError: a worker failed, died or is late.
        """
        if self._comm is None or self._failure is not None:
            return
        timeout = self._timeout if timeout is None else float(timeout)
        waiting_in = f"its goodbye after {self._calls} cross-worker calls"
        try:
            gathered = self._watch.gather(
                ("bye", self._calls, list(self._history)), waiting_in, timeout
            )
        except errors.DeadlineExceededError as exc:
            if not getattr(exc, "late_workers", None):
                raise self._fail(exc) from None
            # A peer still running without a call (a chief saving a model): not an error;
            # a call it makes later meets this goodbye. MPI_Finalize waits for it.
            self._comm = None
            mpi_guard.report("goodbye")
            mpi_sentinel.report("goodbye")
            return
        for peer, message in enumerate(gathered):
            if peer == self._rank or message[0] == "bye":
                continue
            error = self._interpret(peer, message, waiting_in)
            if error is None:
                error = peer_errors.CollectiveMismatchError(
                    f"worker {self._rank} left its program after {self._calls} cross-worker "
                    f"calls, but worker {peer} waits in a further one ({message[2]}): the "
                    "workers made different numbers of collective calls.\n"
                    + peer_errors.history_lines({self._rank: list(self._history)})
                )
            raise self._fail(error)
        self._comm = None  # MPI_Finalize frees the communicators
        mpi_guard.report("goodbye")
        mpi_sentinel.report("goodbye")

    def close(self) -> None:
        if self._comm is not None and self._comm != self._MPI.COMM_NULL:
            self._comm.Free()
            self._ctrl.Free()
            mpi_sentinel.report("goodbye")  # closed on purpose: its peers were told by the app
        self._comm = None

    # --- the data plane ------------------------------------------------------------------

    def run_plan(
        self,
        plan: Plan,
        ranks: Sequence[int],
        flats: Sequence[np.ndarray],
        ufunc: np.ufunc | None,
        timeout: float | None = None,
    ) -> list:
        """Executes ``plan`` across the processes (see :meth:`Transport.run_plan`).

        ``flats`` may be 1-D, or 2-D limb arrays of shape ``(rows, k)`` (segments are rows).

        Raises:
            ValueError: ``ranks`` not ascending distinct ints, ``flats`` of the wrong count,
                row count, shape or dtype, or the workers' ranks not covering
                ``range(plan.num_ranks)`` exactly once.
            DeadlineExceededError, WorkerFailedError: a peer is late or died.
        """
        self._check_usable()
        timeout = self._timeout if timeout is None else float(timeout)
        mine = self._check_local(plan, ranks, flats)
        owner, counts = self._owner_map(plan, mine)
        arrays = [np.ascontiguousarray(f) for f in flats]
        waiting_in = f"{plan.algorithm} {plan.collective}"
        self._calls += 1
        self._history.append(waiting_in)
        mpi_sentinel.call(self._calls, waiting_in)
        if self._native and self._native_applies(plan, ufunc, arrays, counts):
            return self._native_all_reduce(arrays, ufunc, waiting_in, timeout)
        MPI, comm = self._MPI, self._comm

        def transfer(sends, outgoing, receives, views) -> None:
            requests = [
                comm.Irecv([_as_bytes(v), MPI.BYTE], source=m.peer, tag=m.tag % self._tags)
                for m, v in zip(receives, views, strict=True)
            ]
            requests += [
                comm.Isend([_as_bytes(a), MPI.BYTE], m.peer, m.tag % self._tags)
                for m, a in zip(sends, outgoing, strict=True)
            ]
            peers = [m.peer for m in receives]
            statuses = self._wait(requests, peers, waiting_in, timeout)
            for m, view, status in zip(receives, views, statuses[: len(receives)], strict=True):
                if status.Get_count(MPI.BYTE) != view.nbytes:
                    raise ValueError(
                        f"{waiting_in}: worker {m.peer} sent {status.Get_count(MPI.BYTE)} "
                        f"bytes for rank {m.move.src}, rank {m.move.dst} expected "
                        f"{view.nbytes}; every rank needs the same shape and dtype"
                    )

        program = self._program(plan, owner)
        return plan_program.execute(
            plan, program, mine, arrays, ufunc, transfer, self._recv_views_for(plan)
        )

    def _check_local(self, plan: Plan, ranks, flats) -> tuple[int, ...]:
        mine = tuple(int(r) for r in ranks)
        ascending = all(a < b for a, b in zip(mine[:-1], mine[1:], strict=True))
        if not ascending or any(r < 0 for r in mine):
            raise ValueError(f"ranks must be ascending distinct plan ranks, got {list(ranks)}")
        if len(flats) != len(mine):
            raise ValueError(f"{len(flats)} input arrays for {len(mine)} ranks {list(mine)}")
        for r, flat in zip(mine, flats, strict=True):
            if not isinstance(flat, np.ndarray) or flat.ndim not in (1, 2):
                raise ValueError(f"rank {r}: inputs must be 1-D or 2-D ndarrays")
            if r >= plan.num_ranks:
                raise ValueError(f"rank {r} is outside the plan's {plan.num_ranks} ranks")
            s, e = plan.segments[plan.inputs[r]]
            first = flats[0]
            if flat.shape[0] != e - s or flat.shape[1:] != first.shape[1:]:
                raise ValueError(
                    f"rank {r}: input of shape {flat.shape}, the plan needs {e - s} rows "
                    f"(and the same trailing shape on every rank)"
                )
            if flat.dtype != first.dtype or flat.dtype.hasobject:
                raise ValueError(f"rank {r}: dtype {flat.dtype}; one numeric dtype for all")
        return mine

    def _owner_map(self, plan: Plan, mine: tuple[int, ...]):
        """Plan rank -> owning worker, and each worker's rank count (one allgather per
        distinct ``(num_ranks, ranks)``; only layouts that pass the checks are cached, so
        every worker raises the same error for a bad one)."""
        key = (plan.num_ranks, mine)
        cached = self._owners.get(key)
        if cached is not None:
            return cached
        gathered = self.all_gather_object(mine, "plan ranks")
        owner: dict[int, int] = {}
        for worker, ranks in enumerate(gathered):
            for r in ranks:
                if r in owner:
                    raise ValueError(
                        f"plan rank {r} is claimed by workers {owner[r]} and {worker}; "
                        f"each rank belongs to one worker"
                    )
                owner[r] = worker
        if sorted(owner) != list(range(plan.num_ranks)):
            raise ValueError(
                f"the workers own plan ranks {sorted(owner)} but the {plan.collective} plan "
                f"has {plan.num_ranks} ranks; together they must own each of "
                f"0..{plan.num_ranks - 1} once"
            )
        entry = (owner, tuple(len(ranks) for ranks in gathered))
        self._owners[key] = entry
        return entry

    def _program(self, plan: Plan, owner: dict[int, int]) -> list:
        """This worker's steps of ``plan`` (cached per plan and layout)."""
        key = (id(plan), tuple(owner[r] for r in range(plan.num_ranks)))
        cached = self._programs.get(key)
        if cached is not None and cached[0] is plan:
            return cached[1]
        program = plan_program.compile_program(plan, owner, self._rank)
        if len(self._programs) > 64:
            self._programs.clear()
        self._programs[key] = (plan, program)
        return program

    def _recv_views_for(self, plan: Plan):
        """Receive arrays carved from one reusable, cache-line-aligned scratch buffer."""

        def views(receives, dtype, trail) -> list[np.ndarray]:
            itemsize = dtype.itemsize * int(np.prod(trail, dtype=np.int64))
            offsets, total = [], 0
            for m in receives:
                s, e = plan.segments[m.move.dst_seg]
                offsets.append((total, e - s))
                total += -(-(e - s) * itemsize // _ALIGN) * _ALIGN
            if self._scratch.nbytes < total:
                self._scratch = np.empty(total, dtype=np.uint8)
            return [
                self._scratch[off : off + rows * itemsize].view(dtype).reshape((rows,) + trail)
                for off, rows in offsets
            ]

        return views

    # --- the fast option -----------------------------------------------------------------

    def _native_applies(self, plan: Plan, ufunc, arrays, counts) -> bool:
        if plan.collective != "all_reduce" or ufunc not in self._ops or min(counts) == 0:
            return False
        try:
            self._MPI.Datatype.fromcode(arrays[0].dtype.char)
        except (KeyError, ValueError):
            return False
        return True

    def _native_all_reduce(self, arrays, ufunc, waiting_in: str, timeout: float) -> list:
        total = arrays[0].copy()
        for flat in arrays[1:]:
            ufunc(total, flat, out=total)
        request = self._comm.Iallreduce(self._MPI.IN_PLACE, total, op=self._ops[ufunc])
        self._wait([request], self._peers(), waiting_in, timeout)
        return [total] + [total.copy() for _ in arrays[1:]]


def _as_bytes(array: np.ndarray) -> np.ndarray:
    """A C-contiguous array's memory as a 1-D uint8 view (any dtype travels as bytes)."""
    return array.reshape(-1).view(np.uint8)
