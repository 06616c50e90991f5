"""Faults on purpose: a deterministic plan of worker deaths and stragglers for a virtual cluster.

The plan's clock is each worker's own count of ``strategy.run`` calls (its training steps),
so "kill worker 1 at step 7" happens at exactly the same point of the program on every run,
whatever the thread scheduling. A killed worker stops as a crashed process would: it raises
:class:`WorkerKilled` at the start of that step, and :func:`simdist.sim.launch` stops the
other workers and raises :class:`~simdist.backends.base.WorkerFailedError` naming it.

Example::

    plan = FaultPlan().kill_worker(1, step=7).slow_worker(0, seconds=0.01)
    simdist.sim.launch(train, workers=2, faults=plan)   # raises WorkerFailedError
"""

from __future__ import annotations

import dataclasses
import time

__all__ = ["FaultPlan", "WorkerKilled"]


class WorkerKilled(BaseException):
    """A worker was killed by the fault plan (a BaseException: user code cannot catch it
    with ``except Exception``, as it could not catch a process crash)."""

    def __init__(self, worker: int, step: int) -> None:
        super().__init__(f"worker {worker} was killed by the fault plan at step {step}")
        self.worker = worker
        self.step = step


@dataclasses.dataclass
class FaultPlan:
    """Which worker dies at which step, and which workers are slow.

    Attributes:
        kills: worker index -> the step (1-based count of its ``strategy.run`` calls) at
            whose start it dies.
        delays: worker index -> seconds it sleeps at the start of every step (a straggler:
            results do not change; a delay past ``SIMDIST_WORKER_TIMEOUT`` trips the
            deadline, as a hung worker would).
    """

    kills: dict[int, int] = dataclasses.field(default_factory=dict)
    delays: dict[int, float] = dataclasses.field(default_factory=dict)

    def kill_worker(self, worker: int, step: int) -> FaultPlan:
        """Kill ``worker`` at the start of its step ``step`` (>= 1). Returns the plan.

        Raises:
            ValueError: a negative worker or a step below 1.
        """
        if worker < 0 or step < 1:
            raise ValueError(f"kill_worker needs worker >= 0 and step >= 1, got {worker}, {step}")
        self.kills[int(worker)] = int(step)
        return self

    def slow_worker(self, worker: int, seconds: float) -> FaultPlan:
        """Make ``worker`` sleep ``seconds`` at the start of every step. Returns the plan.

        Raises:
            ValueError: a negative worker or delay.
        """
        if worker < 0 or seconds < 0:
            raise ValueError(
                f"slow_worker needs worker >= 0, seconds >= 0; got {worker}, {seconds}"
            )
        self.delays[int(worker)] = float(seconds)
        return self

    def check_workers(self, num_workers: int) -> None:
        """Raises ValueError when the plan names a worker the cluster does not have."""
        named = sorted(set(self.kills) | set(self.delays))
        bad = [w for w in named if w >= num_workers]
        if bad:
            raise ValueError(
                f"The fault plan names worker(s) {bad}, but the cluster has {num_workers} "
                f"workers (0..{num_workers - 1})."
            )

    def on_step(self, worker: int, step: int) -> None:
        """Called by a worker at the start of its step ``step``: sleep, or die."""
        delay = self.delays.get(worker)
        if delay:
            time.sleep(delay)
        if self.kills.get(worker) == step:
            raise WorkerKilled(worker, step)
