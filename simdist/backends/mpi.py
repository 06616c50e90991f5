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

Faults: see :mod:`simdist.backends.mpi_job` (``run_worker_main`` aborts the job when a rank
raises; ``python -m mpi4py script.py`` does too).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.backends.base import Transport
from simdist.backends.mpi_job import (  # the job-level helpers, re-exported here
    INSTALL_HINT,
    _flush_before_abort,
    check_world_size,
    import_mpi,
    run_worker_main,
)
from simdist.collectives.plan import Plan

__all__ = ["INSTALL_HINT", "MPITransport", "check_world_size", "import_mpi", "run_worker_main"]

_ALIGN = 64  # bytes: receive buffers start on cache-line boundaries


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

    def __init__(self, comm=None, *, native_allreduce: bool = False) -> None:
        MPI = import_mpi()
        library = " ".join(MPI.Get_library_version().split("\n")[0].split())
        check_world_size(os.environ, MPI.COMM_WORLD.Get_size(), library)
        self._MPI = MPI
        self._parent = MPI.COMM_WORLD if comm is None else comm
        self._comm = self._parent.Dup()
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

    def all_gather_object(self, obj: Any, label: str = "") -> list:
        return self._comm.allgather(obj)

    def barrier(self) -> None:
        self._comm.Barrier()

    def abort(self, message: str) -> None:
        sys.stderr.write(f"simdist: worker {self._rank} of {self._size} aborts: {message}\n")
        _flush_before_abort()
        self._parent.Abort(1)

    def close(self) -> None:
        if self._comm is not None and self._comm != self._MPI.COMM_NULL:
            self._comm.Free()
        self._comm = None

    # --- the data plane ------------------------------------------------------------------

    def run_plan(
        self,
        plan: Plan,
        ranks: Sequence[int],
        flats: Sequence[np.ndarray],
        ufunc: np.ufunc | None,
    ) -> list:
        """Executes ``plan`` across the processes (see :meth:`Transport.run_plan`).

        ``flats`` may be 1-D, or 2-D limb arrays of shape ``(rows, k)`` (segments are rows).

        Raises:
            ValueError: ``ranks`` not ascending distinct ints, ``flats`` of the wrong count,
                row count, shape or dtype, or the workers' ranks not covering
                ``range(plan.num_ranks)`` exactly once.
        """
        mine = self._check_local(plan, ranks, flats)
        owner, counts = self._owner_map(plan, mine)
        arrays = [np.ascontiguousarray(f) for f in flats]
        if self._native and self._native_applies(plan, ufunc, arrays, counts):
            return self._native_all_reduce(arrays, ufunc)
        return self._execute(plan, owner, mine, arrays, ufunc)

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
        gathered = self._comm.allgather(mine)
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
        """Per step, this worker's receives, sends and applies (cached per plan)."""
        key = (id(plan), tuple(owner[r] for r in range(plan.num_ranks)))
        cached = self._programs.get(key)
        if cached is not None and cached[0] is plan:
            return cached[1]
        me, seg = self._rank, plan.segments
        program, tag = [], 0
        for step in plan.steps:
            written: dict[int, list[tuple[int, int]]] = {}
            for m in step:
                if owner[m.dst] == me:
                    written.setdefault(m.dst, []).append(seg[m.dst_seg])
            recvs, sends, applies = [], [], []
            for m in step:
                src_here, dst_here = owner[m.src] == me, owner[m.dst] == me
                if dst_here and not src_here:
                    applies.append(("recv", len(recvs), m))
                    recvs.append((owner[m.src], tag % self._tags, m))
                elif src_here and not dst_here:
                    sends.append((owner[m.dst], tag % self._tags, m))
                elif src_here:  # both here: a memory operation; snapshot if overwritten
                    a, b = seg[m.src_seg]
                    hazard = a < b and any(a < y and x < b for x, y in written.get(m.src, ()))
                    applies.append(("local", hazard, m))
                tag += 1
            program.append((recvs, sends, applies))
        if len(self._programs) > 64:
            self._programs.clear()
        self._programs[key] = (plan, program)
        return program

    def _recv_views(self, recvs, plan: Plan, dtype, trail) -> list[np.ndarray]:
        itemsize = dtype.itemsize * int(np.prod(trail, dtype=np.int64))
        offsets, total = [], 0
        for _, _, m in recvs:
            s, e = plan.segments[m.dst_seg]
            offsets.append((total, e - s))
            total += -(-(e - s) * itemsize // _ALIGN) * _ALIGN
        if self._scratch.nbytes < total:
            self._scratch = np.empty(total, dtype=np.uint8)
        return [
            self._scratch[off : off + rows * itemsize].view(dtype).reshape((rows,) + trail)
            for off, rows in offsets
        ]

    def _execute(self, plan, owner, mine, arrays, ufunc) -> list:
        MPI, comm, seg = self._MPI, self._comm, plan.segments
        dtype = arrays[0].dtype if arrays else np.dtype(np.uint8)
        trail = arrays[0].shape[1:] if arrays else ()
        bufs: dict[int, np.ndarray] = {}
        for r, flat in zip(mine, arrays, strict=True):
            buf = np.empty((plan.width,) + trail, dtype=dtype)
            s, e = seg[plan.inputs[r]]
            buf[s:e] = flat
            bufs[r] = buf
        for r, src_seg, dst_seg in plan.local:
            if r in bufs:
                bufs[r][slice(*seg[dst_seg])] = bufs[r][slice(*seg[src_seg])]
        for recvs, sends, applies in self._program(plan, owner):
            views = self._recv_views(recvs, plan, dtype, trail)
            requests = [
                comm.Irecv([_as_bytes(v), MPI.BYTE], source=w, tag=t)
                for (w, t, _), v in zip(recvs, views, strict=True)
            ]
            requests += [
                comm.Isend([_as_bytes(bufs[m.src][slice(*seg[m.src_seg])]), MPI.BYTE], w, t)
                for w, t, m in sends
            ]
            snapshots = [
                bufs[m.src][slice(*seg[m.src_seg])].copy() if kind == "local" and flag else None
                for kind, flag, m in applies
            ]
            statuses = [MPI.Status() for _ in requests]
            MPI.Request.Waitall(requests, statuses)
            for (w, _, m), view, status in zip(recvs, views, statuses[: len(recvs)], strict=True):
                if status.Get_count(MPI.BYTE) != view.nbytes:
                    raise ValueError(
                        f"{plan.algorithm} {plan.collective}: worker {w} sent "
                        f"{status.Get_count(MPI.BYTE)} bytes for rank {m.src}, rank {m.dst} "
                        f"expected {view.nbytes}; every rank needs the same shape and dtype"
                    )
            for (kind, flag, m), snap in zip(applies, snapshots, strict=True):
                if kind == "recv":
                    value = views[flag]
                else:
                    value = snap if snap is not None else bufs[m.src][slice(*seg[m.src_seg])]
                target = bufs[m.dst][slice(*seg[m.dst_seg])]
                if m.reduce and ufunc is not None:
                    ufunc(target, value, out=target)
                else:
                    target[...] = value
        return [self._result(plan, r, bufs[r], ufunc) for r in mine]

    @staticmethod
    def _result(plan: Plan, rank: int, buf: np.ndarray, ufunc):
        out = plan.outputs[rank]
        if out is None:
            return None
        if plan.finish == "reduce_slots":
            slots = [buf[slice(*plan.segments[s])] for s in plan.finish_segs]
            total = slots[0].copy()
            for slot in slots[1:]:
                ufunc(total, slot, out=total)
            return total
        s, e = plan.segments[out]
        return buf if (s, e) == (0, plan.width) else buf[s:e].copy()

    # --- the fast option -----------------------------------------------------------------

    def _native_applies(self, plan: Plan, ufunc, arrays, counts) -> bool:
        if plan.collective != "all_reduce" or ufunc not in self._ops or min(counts) == 0:
            return False
        try:
            self._MPI.Datatype.fromcode(arrays[0].dtype.char)
        except (KeyError, ValueError):
            return False
        return True

    def _native_all_reduce(self, arrays, ufunc) -> list:
        total = arrays[0].copy()
        for flat in arrays[1:]:
            ufunc(total, flat, out=total)
        self._comm.Allreduce(self._MPI.IN_PLACE, total, op=self._ops[ufunc])
        return [total] + [total.copy() for _ in arrays[1:]]


def _as_bytes(array: np.ndarray) -> np.ndarray:
    """A C-contiguous array's memory as a 1-D uint8 view (any dtype travels as bytes)."""
    return array.reshape(-1).view(np.uint8)
