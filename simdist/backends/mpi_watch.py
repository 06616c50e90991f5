"""Waiting on MPI with a deadline and an eye on the peers: the MPI transport's blocking points.

MPI's blocking calls wait forever for a peer that never comes. :class:`MPIWatch` replaces
them with polls: :meth:`MPIWatch.gather` exchanges one message with every peer
point-to-point on the control communicator (``Isend`` to each, ``Iprobe`` + ``Recv`` from
each, so a late worker is known by name; messages in :mod:`simdist.backends.wire`'s format,
never pickle), and :meth:`MPIWatch.wait` is ``Waitall`` as a ``Testall`` loop. Between polls
the deadline is checked (``DeadlineExceededError`` naming the workers not yet heard from)
and, every few dozen polls, whether each awaited peer's process on this host still exists
(``WorkerFailedError`` naming it). The loop polls flat out 16 times, then until 50 ms yields
the core between polls (``sched_yield``, as MPICH's own waits do: a peer that shares this
core runs at once), then sleeps 1 ms between polls, so a long wait takes no core.
"""

from __future__ import annotations

import os
import socket
import time

import numpy as np

from simdist.backends import peer_errors, wire

__all__ = ["MPIWatch"]

_CONTROL = 1  # the control communicator's one tag
_BUSY_POLLS = 16  # polls a wait makes flat out before it yields the core between polls
_SPIN = 0.05  # seconds it polls, yielding the core between polls, before it sleeps
_DEADLINE_SOURCE = "CommunicationOptions.timeout_seconds or SIMDIST_WORKER_TIMEOUT"


class MPIWatch:
    """Deadline-bound waits on ``ctrl`` (a communicator of its own) for one rank.

    Created collectively: every rank learns every other rank's host and process id.
    """

    def __init__(self, MPI, ctrl, timeout: float) -> None:
        self._MPI = MPI
        self._ctrl = ctrl
        self._rank = ctrl.Get_rank()
        self._size = ctrl.Get_size()
        self._procs: list | None = None  # unknown until the first exchange
        me = (socket.gethostname(), os.getpid())
        self._procs = list(self.gather(me, "the MPI transport's start-up", timeout))

    def peers(self) -> list[int]:
        return [p for p in range(self._size) if p != self._rank]

    def gather(self, message, waiting_in: str, timeout: float) -> list:
        """Every worker's ``message`` through the control communicator, with the deadline:
        point-to-point (so a late worker is known by name), encoded by :mod:`wire`."""
        MPI, ctrl = self._MPI, self._ctrl
        data = np.frombuffer(wire.encode(message), dtype=np.uint8)
        sends = [ctrl.Isend([data, MPI.BYTE], dest=p, tag=_CONTROL) for p in self.peers()]
        gathered: list = [None] * self._size
        gathered[self._rank] = wire.decode(data)
        pending = set(self.peers())
        deadline = time.monotonic() + timeout
        status = MPI.Status()
        polls = 0
        while pending:
            for peer in sorted(pending):
                if ctrl.Iprobe(source=peer, tag=_CONTROL, status=status):
                    buf = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
                    ctrl.Recv([buf, MPI.BYTE], source=peer, tag=_CONTROL)
                    gathered[peer] = wire.decode(buf)
                    pending.discard(peer)
            if pending:
                polls = self._pause(polls, deadline, sorted(pending), waiting_in, timeout)
        self.wait(sends, [], waiting_in, timeout, deadline)
        return gathered

    def _pause(self, polls: int, deadline: float, pending: list[int], waiting_in, timeout) -> int:
        """Between two polls: check the deadline and the peers' processes, then yield."""
        now = time.monotonic()
        if now > deadline:
            raise peer_errors.late(pending, self._rank, waiting_in, timeout, _DEADLINE_SOURCE)
        if polls % 32 == 31:
            for peer in pending:
                if not self._alive(peer):
                    raise peer_errors.died(peer, self._rank, waiting_in)
        waited = now - (deadline - timeout)
        if polls < _BUSY_POLLS:
            pass  # poll again at once
        elif waited < _SPIN:
            os.sched_yield()  # a peer waiting for this core gets it (MPICH's waits yield too)
        else:
            time.sleep(0.001)
        return polls + 1

    def _alive(self, peer: int) -> bool:
        if self._procs is None:
            return True
        host, pid = self._procs[peer]
        if host != self._procs[self._rank][0]:
            return True  # another host: MPI's launcher sees it, this process cannot
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def wait(self, requests, receive_peers, waiting_in, timeout, deadline=None) -> list:
        """``Waitall`` with the deadline and the peers' processes watched."""
        MPI = self._MPI
        statuses = [MPI.Status() for _ in requests]
        deadline = time.monotonic() + timeout if deadline is None else deadline
        polls = 0
        late = sorted(set(receive_peers)) or self.peers()
        while not MPI.Request.Testall(requests, statuses):
            polls = self._pause(polls, deadline, late, waiting_in, timeout)
        return statuses
