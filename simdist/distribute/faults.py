"""Faults on purpose: deterministic plans of worker deaths, ps failures and stragglers.

Below its users (the cluster coordinator, the launcher in :mod:`simdist.sim`, which
re-exports the names); it imports nothing from simdist.

One plan type serves every virtual cluster; each strategy reads the faults that apply to it.
Every clock is simulated, never wall time, so a run with a plan is as reproducible as one
without:

* ``kill_worker(w, step=k)`` — worker ``w`` dies at its ``k``-th step (1-based, its own
  count). Under ``MultiWorkerMirroredStrategy`` in :func:`simdist.sim.launch` a step is a
  ``strategy.run`` call: the worker dies as it starts it, and the launcher stops the others
  and raises :class:`~simdist.backends.base.WorkerFailedError` naming it. Under
  ``ParameterServerStrategy`` a step is a closure the worker runs for the
  ``ClusterCoordinator``: that closure commits nothing and goes back to the queue (another
  worker runs it, as TF promises); with ``restart_after=t`` the worker rejoins ``t``
  simulated seconds later with its per-worker datasets rebuilt.
* ``kill_ps(p, after_closures=n)`` — ps task ``p`` fails once ``n`` closures have finished
  cluster-wide; every closure touching it then fails with ``UnavailableError``, which the
  coordinator raises so that the user's restart-from-checkpoint path runs.
* ``slow_worker(w, seconds)`` — worker ``w`` sleeps at the start of every step of a launched
  cluster (a straggler: results do not change; a delay past ``SIMDIST_WORKER_TIMEOUT`` trips
  the deadline, as a hung worker would).

>>> FaultPlan().kill_worker(1, step=7).kill_ps(0, after_closures=10)
FaultPlan(worker_failures=(WorkerFailure(worker=1, step=7, restart_after=None),), \
ps_failures=(PSFailure(ps=0, after_closures=10),), delays={})
>>> FaultPlan.parse("worker:1@7, ps:0@10") == _
True
"""

from __future__ import annotations

import dataclasses
import numbers
import time

__all__ = ["FaultPlan", "WorkerFailure", "PSFailure", "WorkerKilled"]


class WorkerKilled(BaseException):
    """A launched worker was killed by the fault plan (a BaseException: user code cannot
    catch it with ``except Exception``, as it could not catch a process crash)."""

    def __init__(self, worker: int, step: int) -> None:
        super().__init__(f"worker {worker} was killed by the fault plan at step {step}")
        self.worker = worker
        self.step = step


@dataclasses.dataclass(frozen=True)
class WorkerFailure:
    """Worker ``worker`` dies at its ``step``-th step (1-based, its own count)."""

    worker: int
    step: int
    restart_after: float | None = None  # simulated seconds until it rejoins (PS); None: never


@dataclasses.dataclass(frozen=True)
class PSFailure:
    """Ps task ``ps`` fails once ``after_closures`` closures have finished cluster-wide."""

    ps: int
    after_closures: int


@dataclasses.dataclass
class FaultPlan:
    """The faults of one run; see the module docstring. Build it with the methods (each
    returns the plan) or :meth:`parse`.

    Raises:
        ValueError: a negative index, a step below 1, a non-positive restart delay.
    """

    worker_failures: tuple[WorkerFailure, ...] = ()
    ps_failures: tuple[PSFailure, ...] = ()
    delays: dict[int, float] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.worker_failures = tuple(self.worker_failures)
        self.ps_failures = tuple(self.ps_failures)
        for f in self.worker_failures:
            if f.worker < 0 or f.step < 1:
                raise ValueError(f"{f}: a failure needs worker >= 0 and step >= 1.")
            if f.restart_after is not None and f.restart_after <= 0:
                raise ValueError(f"{f}: restart_after must be > 0 simulated seconds, or None.")
        for f in self.ps_failures:
            if f.ps < 0 or f.after_closures < 0:
                raise ValueError(f"{f}: ps and after_closures must be >= 0.")

    # --- building ----------------------------------------------------------------------------
    def kill_worker(self, worker: int, step: int, restart_after: float | None = None) -> FaultPlan:
        """Worker ``worker`` dies at its step ``step`` (>= 1). Returns the plan.

        Raises:
            ValueError: ``worker`` or ``step`` is not an integer.
        """
        for label, value in (("worker", worker), ("step", step)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ValueError(
                    f"kill_worker: {label} must be an integer, got {value!r}; a worker dies at "
                    "a whole step number (>= 1) of a whole worker index."
                )
        failure = WorkerFailure(int(worker), int(step), restart_after)
        self.worker_failures = (*self.worker_failures, failure)
        self.__post_init__()
        return self

    def kill_ps(self, ps: int, after_closures: int) -> FaultPlan:
        """Ps task ``ps`` fails after ``after_closures`` finished closures. Returns the plan."""
        self.ps_failures = (*self.ps_failures, PSFailure(int(ps), int(after_closures)))
        self.__post_init__()
        return self

    def slow_worker(self, worker: int, seconds: float) -> FaultPlan:
        """Worker ``worker`` sleeps ``seconds`` at the start of every step. Returns the plan."""
        if worker < 0 or seconds < 0:
            raise ValueError(
                f"slow_worker needs worker >= 0 and seconds >= 0, got {worker}, {seconds}"
            )
        self.delays[int(worker)] = float(seconds)
        return self

    @classmethod
    def parse(cls, text: str) -> FaultPlan:
        """``"worker:W@K[+T], ps:P@N"``: worker W dies at its step K (1-based; rejoining after
        T simulated seconds), ps P fails after N finished closures.

        Raises:
            ValueError: an entry that is not of that form.
        """
        plan = cls()
        for entry in (e.strip() for e in text.split(",") if e.strip()):
            try:
                kind, rest = entry.split(":", 1)
                who, when = rest.split("@", 1)
                restart = None
                if "+" in when:
                    when, after = when.split("+", 1)
                    restart = float(after)
                if kind == "worker":
                    plan.kill_worker(int(who), int(when), restart)
                elif kind == "ps" and restart is None:
                    plan.kill_ps(int(who), int(when))
                else:
                    raise ValueError(kind)
            except ValueError:
                raise ValueError(
                    f"Cannot read fault {entry!r}; write 'worker:W@K' (worker W dies at its "
                    "step K, counted from 1), 'worker:W@K+T' (and rejoins after T simulated "
                    "seconds) or 'ps:P@N' (ps P fails after N finished closures), separated "
                    "by commas."
                ) from None
        return plan

    # --- reading -----------------------------------------------------------------------------
    def check(self, num_workers: int, num_ps: int = 0) -> None:
        """Raises ``ValueError`` for a fault naming a task the cluster does not have."""
        workers = sorted({f.worker for f in self.worker_failures} | set(self.delays))
        bad = [w for w in workers if w >= num_workers]
        if bad:
            raise ValueError(
                f"The fault plan names worker(s) {bad}, but the cluster has {num_workers} "
                f"workers (0..{num_workers - 1})."
            )
        for f in self.ps_failures:
            if f.ps >= num_ps:
                raise ValueError(
                    f"{f} names ps {f.ps}, but the cluster has {num_ps} ps tasks"
                    + (f" (0..{num_ps - 1})." if num_ps else ".")
                )

    check_workers = check

    def worker_failure(self, worker: int, step: int) -> WorkerFailure | None:
        """The failure planned for ``worker``'s step ``step`` (1-based), if any."""
        for f in self.worker_failures:
            if f.worker == worker and f.step == step:
                return f
        return None

    def ps_failing_after(self, finished: int) -> list[PSFailure]:
        """The ps failures due when ``finished`` closures have finished."""
        return [f for f in self.ps_failures if f.after_closures == finished]

    def on_step(self, worker: int, step: int) -> None:
        """Called by a launched worker at the start of its step ``step``: sleep, or die."""
        delay = self.delays.get(worker)
        if delay:
            time.sleep(delay)
        if self.worker_failure(worker, step) is not None:
            raise WorkerKilled(worker, step)
