"""The transport of processes started one per ``TF_CONFIG``, as TensorFlow's documents run them.

Each process is one training task (the chief, then the workers, numbered as
``id_in_cluster`` numbers them); they meet at the addresses ``TF_CONFIG`` names, over a mesh
of authenticated TCP links (:mod:`simdist.backends.connections`). Every message is encoded
by :mod:`simdist.backends.wire` (JSON and raw array bytes, never pickle).

* Control plane (:meth:`SocketTransport.all_gather_object`): each worker sends
  ``("call", n, label, value)`` to every peer and reads one message from each.
* Data plane (:meth:`SocketTransport.run_plan`): the plan executed distributed by
  :func:`simdist.backends.plan_program.execute`, each cross-worker move one
  ``("data", call, tag, array)`` message, so results are bit-identical to the virtual
  cluster and to MPI.
* No hangs: every wait has the deadline (``CommunicationOptions.timeout_seconds``, else
  ``SIMDIST_WORKER_TIMEOUT``) and raises ``DeadlineExceededError`` naming the late
  workers; a peer's ``"bye"`` met inside a call is ``CollectiveMismatchError``, its
  ``"abort"`` the error it failed with, a closed connection without a goodbye a dead
  worker (``WorkerFailedError``), each naming the worker and its task. A worker that
  raises tells every peer before it stops; at exit the workers say goodbye
  (:mod:`simdist.backends.exit_guard`).
"""

from __future__ import annotations

import collections
import queue
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.backends import exit_guard, peer_errors, plan_program, wire
from simdist.backends.base import Transport, WorkerFailedError
from simdist.backends.connections import CLOSED, open_mesh
from simdist.collectives.plan import Plan

__all__ = ["SocketTransport"]

_HISTORY = 8  # cross-worker calls remembered for error messages


class SocketTransport(Transport):
    """Worker ``index`` of the processes at ``addresses`` (one per training task).

    Args:
        addresses: every training task's ``host:port``, in worker order.
        names: every task's name (``"chief:0"``, ``"worker:1"``), for messages.
        index: this process's worker index.
        key: the job key both ends of every link must hold.
        timeout: the default deadline of every wait, in seconds.
        key_source: where the key came from, for messages.
        exit_guard_on: register the goodbye/abort at interpreter exit (the default).
        startup_timeout: how long to wait for the other tasks to connect (default
            ``max(timeout, 60)``: tasks started by hand start seconds apart).

    Raises:
        ValueError: this task's address cannot be listened on here.
        DeadlineExceededError: the other tasks did not all connect in ``startup_timeout``.
        UnauthenticatedError: a peer holds another job key.
    """

    def __init__(
        self,
        addresses: Sequence[str],
        names: Sequence[str],
        index: int,
        key: bytes,
        timeout: float,
        key_source: str = "",
        exit_guard_on: bool = True,
        startup_timeout: float | None = None,
    ) -> None:
        self._addresses = list(addresses)
        self._names = list(names)
        self._index = int(index)
        self._count = len(self._addresses)
        self._timeout = float(timeout)
        self._key_source = key_source
        startup = max(self._timeout, 60.0) if startup_timeout is None else float(startup_timeout)
        self._links = open_mesh(self._addresses, self._names, self._index, key, startup)
        self._calls = 0
        self._history: collections.deque[str] = collections.deque(maxlen=_HISTORY)
        self._peer_history: dict[int, list[str]] = {}
        self._owners: dict[tuple, tuple[dict[int, int], ...]] = {}
        self._programs: dict[tuple, tuple] = {}
        self._failure: BaseException | None = None
        self._closed = False
        if exit_guard_on:
            exit_guard.install(self)

    @property
    def num_workers(self) -> int:
        return self._count

    @property
    def worker_index(self) -> int:
        return self._index

    @property
    def task_names(self) -> list[str]:
        return list(self._names)

    # --- messages --------------------------------------------------------------------------
    def _peers(self):
        return [p for p in range(self._count) if p != self._index]

    def _send_all(self, message) -> None:
        encoded = wire.encode(message)  # once for every peer
        for peer in self._peers():
            try:
                self._links[peer].send(message, encoded)
            except OSError:
                pass  # a dead peer: its reader has seen or will see the closed connection

    def _receive(
        self, peer: int, deadline: float, waiting_in: str, timeout: float, bye_ok: bool = False
    ):
        """The next message from ``peer``, as the error it stands for where it is one."""
        remaining = deadline - time.monotonic()
        try:
            message = self._links[peer].inbox.get(timeout=max(remaining, 0.0))
        except queue.Empty:
            late = [peer] + [p for p in self._peers() if p > peer and self._links[p].inbox.empty()]
            return None, peer_errors.late(
                late, self._index, waiting_in, timeout, self._deadline_source(), self._names
            )
        if message is CLOSED:
            self._links[peer].inbox.put(CLOSED)  # stays closed for later calls
            error = peer_errors.died(
                peer, self._index, waiting_in, self._names, self._addresses[peer]
            )
            return None, error
        kind = message[0] if isinstance(message, tuple) and message else None
        if kind == "abort" and len(message) == 4:
            return None, peer_errors.from_abort(
                peer, str(message[2]), str(message[3]), self._index, self._names
            )
        if kind == "bye" and len(message) == 3 and not bye_ok:
            self._peer_history[peer] = list(message[2])
            histories = {self._index: list(self._history), **self._peer_history}
            return None, peer_errors.left_program(
                peer, int(message[1]), self._index, waiting_in, histories, self._names
            )
        if kind == "garbled":
            return None, WorkerFailedError(
                f"worker {peer} ({self._names[peer]}) sent a message that is not simdist's "
                f"wire format ({message[1]}); the link is closed.",
                peer,
            )
        return message, None

    def _deadline_source(self) -> str:
        return "CommunicationOptions.timeout_seconds or SIMDIST_WORKER_TIMEOUT"

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise RuntimeError("this worker's transport is closed (the program has ended)")

    def _fail(self, error: BaseException) -> BaseException:
        """Remember ``error``, tell every peer, and return it for raising."""
        if self._failure is None:
            self._failure = error
            self._send_all(peer_errors.abort_message(self._index, error))
        return error

    # --- the control plane -----------------------------------------------------------------
    def all_gather_object(self, obj: Any, label: str = "", timeout: float | None = None) -> list:
        self._check_usable()
        timeout = self._timeout if timeout is None else float(timeout)
        call = self._calls
        self._calls += 1
        waiting_in = f"cross-worker call {call + 1} ({label or 'exchange'})"
        self._history.append(label or "exchange")
        self._send_all(("call", call, label, obj))  # a value the wire cannot carry fails here
        gathered: list = [None] * self._count
        gathered[self._index] = wire.decode(wire.encode(obj))  # as the peers see it
        deadline = time.monotonic() + timeout
        for peer in self._peers():
            message, error = self._receive(peer, deadline, waiting_in, timeout)
            well_formed = isinstance(message, tuple) and len(message) == 4
            if error is None and (not well_formed or message[:2] != ("call", call)):
                what = f"a {message[0]!r} message" if isinstance(message, tuple) else "garbage"
                error = peer_errors.out_of_step(peer, what, self._index, waiting_in, self._names)
            if error is not None:
                raise self._fail(error)
            gathered[peer] = message[3]
        return gathered

    # --- the data plane --------------------------------------------------------------------
    def run_plan(
        self,
        plan: Plan,
        ranks: Sequence[int],
        flats: Sequence[np.ndarray],
        ufunc: np.ufunc | None,
        timeout: float | None = None,
    ) -> list:
        mine = tuple(int(r) for r in ranks)
        if len(flats) != len(mine):
            raise ValueError(f"{len(flats)} input arrays for {len(mine)} ranks {list(mine)}")
        owner = self._owner_map(plan, mine, timeout)
        key = (id(plan), tuple(owner[r] for r in range(plan.num_ranks)))
        cached = self._programs.get(key)
        if cached is None or cached[0] is not plan:
            if len(self._programs) > 64:
                self._programs.clear()
            cached = self._programs[key] = (
                plan,
                plan_program.compile_program(plan, owner, self._index),
            )
        arrays = [np.ascontiguousarray(f) for f in flats]
        timeout = self._timeout if timeout is None else float(timeout)
        call = self._calls
        self._calls += 1
        label = f"{plan.algorithm} {plan.collective}"
        self._history.append(label)
        waiting_in = f"cross-worker call {call + 1} ({label})"

        def transfer(sends, outgoing, receives, views) -> None:
            self._check_usable()
            for message, array in zip(sends, outgoing, strict=True):
                try:
                    self._links[message.peer].send_array(call, message.tag, array)
                except OSError:
                    pass  # seen as a closed connection when its reply is awaited
            deadline = time.monotonic() + timeout
            for message, view in zip(receives, views, strict=True):
                got, error = self._receive(message.peer, deadline, waiting_in, timeout)
                if error is None:
                    error = self._check_data(got, call, message, view, label)
                if error is not None:
                    raise self._fail(error)
                view[...] = got[3]

        return plan_program.execute(plan, cached[1], mine, arrays, ufunc, transfer)

    def _check_data(self, got, call: int, message, view, label: str):
        ok = (
            isinstance(got, tuple)
            and len(got) == 4
            and got[0] == "data"
            and got[1:3] == (call, message.tag)
            and isinstance(got[3], np.ndarray)
        )
        if ok and got[3].shape == view.shape and got[3].dtype == view.dtype:
            return None
        kind = got[0] if isinstance(got, tuple) and got else "?"
        what = f"{got[3].dtype} {got[3].shape}" if ok else f"a {kind!r} message"
        return peer_errors.CollectiveMismatchError(
            f"{label}: worker {message.peer} ({self._names[message.peer]}) sent {what} for "
            f"rank {message.move.src}, worker {self._index} expected {view.dtype} "
            f"{view.shape}; every rank needs the same shape and dtype in the same call."
        )

    def _owner_map(self, plan: Plan, mine: tuple[int, ...], timeout) -> dict[int, int]:
        key = (plan.num_ranks, mine)
        cached = self._owners.get(key)
        if cached is not None:
            return cached[0]
        gathered = self.all_gather_object(
            ("plan_ranks", plan.num_ranks, mine), "plan ranks", timeout
        )
        owner: dict[int, int] = {}
        for worker, (_, _, ranks) in enumerate(gathered):
            for r in ranks:
                if r in owner:
                    raise ValueError(f"plan rank {r} is claimed by workers {owner[r]} and {worker}")
                owner[r] = worker
        if sorted(owner) != list(range(plan.num_ranks)):
            raise ValueError(
                f"the workers own plan ranks {sorted(owner)} but the plan has {plan.num_ranks}"
            )
        self._owners[key] = (owner,)
        return owner

    # --- the end ---------------------------------------------------------------------------
    def finish(self, timeout: float | None = None) -> None:
        """Say goodbye and wait for every peer's (see :mod:`simdist.backends.exit_guard`).

        A peer still running at the deadline without a call (a chief that saves a model
        while the workers leave) is not an error: the goodbye waits in its inbox, and a call
        it makes later meets it there (``CollectiveMismatchError`` on its side).

        Raises:
            CollectiveMismatchError: a peer waits in a further cross-worker call.
            WorkerFailedError: a peer failed or died.
        """
        if self._closed or self._failure is not None:
            self.close()
            return
        timeout = self._timeout if timeout is None else float(timeout)
        self._send_all(("bye", self._calls, list(self._history)))
        deadline = time.monotonic() + timeout
        waiting_in = f"its goodbye after {self._calls} cross-worker calls"
        try:
            for peer in self._peers():
                message, error = self._receive(peer, deadline, waiting_in, timeout, bye_ok=True)
                if error is None and message[0] == "bye":
                    continue
                if getattr(error, "late_workers", None):  # still running: not an error
                    continue
                if error is None:
                    peer_label = message[2] if message[0] == "call" else message[0]
                    error = peer_errors.CollectiveMismatchError(
                        f"worker {self._index} ({self._names[self._index]}) left its program "
                        f"after {self._calls} cross-worker calls, but worker {peer} "
                        f"({self._names[peer]}) waits in a further one ({peer_label}): the "
                        "workers made different numbers of collective calls.\n"
                        + peer_errors.history_lines({self._index: list(self._history)}, self._names)
                    )
                raise self._fail(error)
        finally:
            if self._failure is None:
                self.close()

    def abort(self, message: str) -> None:
        self.abort_quietly(message)
        raise WorkerFailedError(message, self._index)

    def abort_quietly(self, message: str, kind: str = "WorkerFailedError") -> None:
        """Tell every peer that this worker failed (``kind: message``); close the links."""
        if not self._closed:
            if self._failure is None:
                self._failure = WorkerFailedError(message, self._index)
                self._send_all(("abort", self._index, kind, message))
            self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for link in self._links.values():
            link.close()
