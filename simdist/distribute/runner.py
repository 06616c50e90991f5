"""The replica runner: ``strategy.run`` as N replica threads in lockstep, never a hang.

Each replica runs the step function on a thread of its own (with its own device scope,
tapes, replica context and random stream; threads are pooled across runs and start each run
with fresh thread-local state; a thread handed the turn wakes on the CPU of the thread that
handed it over: see ``handover``), but only one replica runs at a time: the
coordinator (the caller's thread) hands the turn to replica 0, which runs until it reaches a
collective or returns; then replica 1; and so on. When every replica waits in a collective,
the coordinator checks they all called the same one, computes it once in replica order, and
hands each its result. So:

* results never depend on thread scheduling (determinism contract, rule 1);
* code that is not thread-safe (a Keras layer built lazily on first call) is safe;
* a replica that raises stops the run with that exception, tagged with the replica id;
* a replica that returns, or calls a different collective, while others wait in one raises
  :class:`CollectiveMismatchError` with every replica's collective calls side by side;
* a replica that neither reaches a collective nor returns within the deadline raises
  ``DeadlineExceededError`` (``SIMDIST_REPLICA_TIMEOUT`` seconds, default 600).
"""

from __future__ import annotations

import collections
import contextvars
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from simdist import errors, settings
from simdist.distribute import handover

__all__ = [
    "Collective",
    "CollectiveMismatchError",
    "ReplicaRunner",
    "current_replica",
    "unwind_if_stopped",
]


class CollectiveMismatchError(errors.InvalidArgumentError):
    """Replicas made different collective calls (where the real thing would hang)."""


class _ReplicaAborted(BaseException):
    """Unwinds a replica thread when the run is stopped (not an Exception: not swallowed)."""


class Collective:
    """One collective call of one replica: what it is, and how all calls combine.

    Args:
        kind: what is called (``"all_reduce"``, ``"merge_call"``...), shown in errors.
        signature: what must be equal on every replica for the calls to match (kind, op,
            structure, shapes...); printable.
        payload: this replica's contribution.
        combine: ``combine(payloads) -> replies``, run once on the coordinator with every
            replica's payload in replica order; returns one reply per replica.
        label: what the call is for, shown in error messages (not compared).

    ``timeout`` (settable, default ``None``): a deadline of this call shorter than the run's
    (``CommunicationOptions.timeout_seconds``): the others must arrive within it.
    """

    __slots__ = ("kind", "signature", "payload", "combine", "label", "timeout")

    def __init__(
        self, kind: str, signature: Any, payload: Any, combine: Callable, label: str = ""
    ) -> None:
        self.kind = kind
        self.signature = signature
        self.payload = payload
        self.combine = combine
        self.label = label  # shown in errors, not compared
        self.timeout: float | None = None

    def describe(self) -> str:
        return f"{self.kind}{self.signature}" + (f"[{self.label}]" if self.label else "")


class _Signal:
    """A binary semaphore on one raw lock, for handing the turn between threads.

    ``post`` and ``wait`` are one C call each (``threading.Semaphore`` runs a Condition and
    a Python loop per hand-off, several per replica per step), plus the two affinity calls
    of ``handover`` when the thread that waits on it is known (``waiter``). At most one
    signal is ever pending in the hand-off protocol; a second ``post`` before a ``wait`` is
    a no-op.
    """

    __slots__ = ("_lock", "waiter")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self.waiter: handover.Sleeper | None = None  # the one thread that waits on it

    def post(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            waiter.move_here()
        try:
            self._lock.release()
        except RuntimeError:  # already posted
            pass

    def wait(self, timeout: float = -1) -> bool:
        posted = self._lock.acquire(timeout=timeout)
        waiter = self.waiter
        if waiter is not None:
            waiter.woken()
        return posted


class _Replica:
    def __init__(self, replica_id: int) -> None:
        self.id = replica_id
        self.turn = _Signal()  # coordinator -> replica: your turn
        self.status = "new"  # new | collective | done | error | aborted
        self.value: Any = None  # the return value, the exception, or the Collective
        self.reply: Any = None
        self.abort = False
        self.calls: collections.deque[str] = collections.deque(maxlen=_HISTORY)
        self.num_calls = 0
        self.worker: _PooledThread | None = None  # taken when it first gets the turn
        self.start: Callable[[], None] | None = None  # its body, for that first turn
        self.finished = False  # its body has returned (the run gives its thread back)
        self.running = False  # it has the turn (a stuck replica keeps it after a timeout)


_local = threading.local()
_HISTORY = 16  # collective calls kept per replica for error messages

# Thread-local state a replica body may set, reset before each body so that a pooled thread
# starts it as a new thread would: (module, attribute) of each threading.local.
_THREAD_LOCALS = (
    ("simdist.core.context", "state"),
    ("simdist.core.autocast", "_STATE"),
    ("simdist.keras.object_registration", "_SCOPE"),
    ("simdist.keras.engine.base_layer", "_CTX"),
    ("simdist.distribute.distributed_variables", "_update"),
    ("simdist.distribute.runner", "_local"),
    ("simdist.distribute.worker_context", "_local"),
    ("simdist.distribute.cluster_resolver.tf_config", "_local"),
    ("simdist.sim.worker_environ", "_local"),
    ("simdist.distribute.set_strategy", "_local"),
    ("simdist.summary.writer", "_STATE"),
)


def _reset_thread_locals() -> None:
    for module_name, attr in _THREAD_LOCALS:
        module = sys.modules.get(module_name)
        local = getattr(module, attr, None) if module is not None else None
        if isinstance(local, threading.local):
            local.__dict__.clear()
            if type(local).__init__ is not threading.local.__init__:
                type(local).__init__(local)


class _PooledThread:
    """A daemon thread that runs replica bodies one after another, each as on a new thread.

    Starting a thread per replica per ``strategy.run`` costs more than the hand-off itself
    (the thread, and warming its allocator and BLAS buffers); a body that finishes hands
    its thread back to the pool. Each body runs with the thread-locals above reset and in
    an empty ``contextvars`` context, as a new thread's would be.
    """

    _idle: list[_PooledThread] = []
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._wake = _Signal()
        self._job: Callable[[], None] | None = None
        self.thread = threading.Thread(target=self._loop, name="simdist-pool", daemon=True)
        self.thread.start()  # returns once the thread runs: its native id is known
        self.sleeper = handover.Sleeper(tid=self.thread.native_id)
        self._wake.waiter = self.sleeper

    @classmethod
    def take(cls) -> _PooledThread:
        with cls._lock:
            while cls._idle:
                pooled = cls._idle.pop()
                if pooled.thread.is_alive():
                    return pooled
        return cls()

    @classmethod
    def _forget_after_fork(cls) -> None:
        # A forked child has none of these threads, and the lock may be held.
        cls._idle = []
        cls._lock = threading.Lock()

    def give_back(self) -> None:
        with self._lock:
            if not any(t is self for t in self._idle):  # the run and a late body may both try
                self._idle.append(self)

    def submit(self, job: Callable[[], None], name: str) -> None:
        self.thread.name = name
        self._job = job
        self._wake.post()

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            job, self._job = self._job, None
            _reset_thread_locals()
            contextvars.Context().run(job)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_PooledThread._forget_after_fork)


def current_replica() -> _Replica | None:
    return getattr(_local, "replica", None)


def unwind_if_stopped() -> None:
    """Unwind this thread if the run it belongs to was stopped without it.

    A replica (or virtual-cluster worker) stuck past its deadline keeps its thread: Python
    cannot stop it, and the run returns without it. When it wakes it must not go on with
    its program (a next ``strategy.run``, seen by whatever listens in the process then);
    its next collective unwinds it, and so does this check at the start of a run.
    """
    rep = getattr(_local, "replica", None)
    if rep is not None and rep.abort:
        raise _ReplicaAborted()


def _timeout() -> float:
    return settings.get().replica_timeout


class ReplicaRunner:
    """Runs ``fn`` once per replica in lockstep; see the module docstring."""

    def __init__(
        self,
        num_replicas: int,
        setup: Callable[[int], Callable[[], None]],
        noun: str = "replica",
        timeout: float | None = None,
    ) -> None:
        """``setup(replica_id)`` runs first on each replica thread; it returns a teardown.

        ``noun`` names the units in messages ("replica"; the virtual cluster runs its
        workers with "worker"); ``timeout`` overrides ``SIMDIST_REPLICA_TIMEOUT``.
        """
        self._replicas = [_Replica(i) for i in range(num_replicas)]
        self._setup = setup
        self._yielded = _Signal()  # replica -> coordinator: I stopped
        self._timeout = _timeout() if timeout is None else timeout
        self._timeout_setting: str | None = None  # the variable that sets it, for messages
        self.noun = noun

    # --- replica side ---------------------------------------------------------------------
    def _body(
        self, rep: _Replica, fn: Callable, args: tuple, kwargs: dict
    ) -> None:
        # Submitted when the replica first gets the turn: it holds the turn from the start.
        teardown = None
        try:
            if rep.abort:
                raise _ReplicaAborted()
            _local.replica = rep
            _local.runner = self
            teardown = self._setup(rep.id)
            rep.value = fn(*args, **kwargs)
            rep.status = "done"
        except _ReplicaAborted:
            rep.status = "aborted"
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            rep.value = exc
            rep.status = "error"
        finally:
            if teardown is not None:
                teardown()
            _local.replica = None
            rep.finished = True
            if rep.abort:  # the run ended without it (a deadline): nobody else returns it
                rep.worker.give_back()
            self._yielded.post()

    def collective(self, call: Collective) -> Any:
        """Called on a replica thread: wait until every replica arrives; return our reply."""
        rep = current_replica()
        if rep is None or getattr(_local, "runner", None) is not self:
            raise RuntimeError("A collective was called outside the replica threads of this run.")
        if rep.abort:  # the run was stopped while this replica was stuck: unwind
            raise _ReplicaAborted()
        rep.calls.append(call.describe())
        rep.num_calls += 1
        rep.value = call
        rep.status = "collective"
        self._yielded.post()
        rep.turn.wait()
        if rep.abort:
            raise _ReplicaAborted()
        reply, rep.reply = rep.reply, None
        return reply

    # --- coordinator side -----------------------------------------------------------------
    def run(self, fn: Callable, per_replica_args: list[tuple[tuple, dict]]) -> list:
        """Run ``fn(*args_i, **kwargs_i)`` on replica i; return the results in replica order."""
        for rep, (args, kwargs) in zip(self._replicas, per_replica_args, strict=True):
            rep.start = lambda rep=rep, args=args, kwargs=kwargs: self._body(
                rep, fn, args, kwargs
            )
        coordinator = self._yielded.waiter = handover.Sleeper()  # this thread
        try:
            return self._coordinate()
        finally:
            self._stop_all()
            coordinator.close()  # a replica that outlives the run must not move this thread
            # Threads go back to the pool when the run ends, not when a body returns: every
            # replica of a run has a thread of its own, as in TF.
            for rep in self._replicas:
                if rep.worker is not None and rep.finished:
                    rep.worker.give_back()

    def _resume(self, rep: _Replica) -> None:
        rep.running = True
        if rep.worker is None:  # its first turn: a pooled thread starts its body (one wake)
            rep.worker = _PooledThread.take()
            rep.turn.waiter = rep.worker.sleeper
            rep.worker.submit(rep.start, f"simdist-{self.noun}-{rep.id}")
        else:
            rep.turn.post()
        timeout, what = self._deadline()
        if self._yielded.wait(timeout=timeout):
            rep.running = False
        else:
            waiting = [r.id for r in self._replicas if r.status == "collective"]
            raise errors.DeadlineExceededError(
                f"{self.noun.capitalize()} {rep.id} neither reached a collective nor returned "
                f"within {timeout:g} s ({self.noun}s {waiting} wait in a collective). Is "
                "it blocked (a lock, an input queue, an endless loop)? Raise "
                f"{what} if it is just slow."
            )

    def _deadline(self) -> tuple[float, str]:
        """The wait for the running one: the run's, or a shorter one a waiting call set; and
        what sets it, for the message (looked up once per runner: every turn asks)."""
        timeout, what = self._timeout, None
        for r in self._replicas:
            call_timeout = getattr(r.value, "timeout", None) if r.status == "collective" else None
            if call_timeout is not None and call_timeout < timeout:
                timeout, what = call_timeout, "CommunicationOptions.timeout_seconds"
        if what is None:
            what = self._timeout_setting
            if what is None:
                what = self._timeout_setting = settings.env_name(f"{self.noun}_timeout")
        return timeout, what

    def _coordinate(self) -> list:
        reps = self._replicas
        while True:
            for rep in reps:
                if rep.status in ("done",):
                    continue
                self._resume(rep)
                if rep.status == "error":
                    exc = rep.value
                    _tag(exc, rep.id, len(reps), self.noun)
                    raise exc
            statuses = {r.status for r in reps}
            if statuses == {"done"}:
                return [r.value for r in reps]
            if statuses == {"collective"}:
                calls = [r.value for r in reps]
                self._check_match(calls)
                replies = calls[0].combine([c.payload for c in calls])
                for rep, reply in zip(reps, replies, strict=True):
                    rep.reply = reply
                continue
            self._raise_divergence()

    def _check_match(self, calls: list[Collective]) -> None:
        first = calls[0]
        for rep, call in zip(self._replicas[1:], calls[1:], strict=True):
            if call.kind != first.kind or call.signature != first.signature:
                noun = self.noun
                raise CollectiveMismatchError(
                    f"{noun.capitalize()}s called different collectives: {noun} 0 is in "
                    f"{first.describe()}, {noun} {rep.id} is in {call.describe()}. Every "
                    f"{noun} must make the same collective calls, with the same structure "
                    "and shapes, in the same order.\n" + self._histories()
                )

    def _raise_divergence(self) -> None:
        done = [r.id for r in self._replicas if r.status == "done"]
        waiting = [r for r in self._replicas if r.status == "collective"]
        noun = self.noun
        where = "the step function" if noun == "replica" else "its program"
        raise CollectiveMismatchError(
            f"{noun.capitalize()}(s) {done} returned from {where} while {noun}(s) "
            f"{[r.id for r in waiting]} wait in {waiting[0].value.describe()}: the {noun}s "
            "made different numbers of collective calls (a collective inside a branch that "
            f"only some {noun}s take?). Real hardware would hang here.\n" + self._histories()
        )

    def _histories(self) -> str:
        lines = [f"Collective calls per {self.noun}:"]
        for rep in self._replicas:
            earlier = rep.num_calls - len(rep.calls)
            shown = ", ".join(rep.calls) or "(none)"
            prefix = f"({earlier} earlier calls) ... " if earlier else ""
            lines.append(f"  {self.noun} {rep.id}: {prefix}{shown}")
        return "\n".join(lines)

    def _stop_all(self) -> None:
        for rep in self._replicas:
            if rep.worker is None or rep.finished:
                continue
            if rep.running:  # stuck past the deadline: a daemon thread we cannot stop
                rep.abort = True
                continue
            if rep.status in ("new", "collective"):
                rep.abort = True
                rep.turn.post()
                self._yielded.wait(timeout=self._timeout)


def _tag(exc: BaseException, replica_id: int, num_replicas: int, noun: str = "replica") -> None:
    setattr(exc, f"{noun}_id", replica_id)
    where = "in strategy.run" if noun == "replica" else "of the virtual cluster"
    note = f"(raised on {noun} {replica_id} of {num_replicas} {where})"
    if hasattr(exc, "add_note"):
        if note not in getattr(exc, "__notes__", []):
            exc.add_note(note)
