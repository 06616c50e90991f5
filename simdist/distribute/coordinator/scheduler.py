"""The simulated clock of a ps cluster: which worker runs which closure, and when.

Nothing here runs user code; the coordinator asks the scheduler what happens next. Rules:

* closures wait in one FIFO queue (a closure whose worker died goes back to its end, as
  TF's ``put_back``);
* an idle, live worker takes the head of the queue at the current time; several idle
  workers take closures in worker-index order;
* a closure takes ``step_time * (1 + jitter * u)`` simulated seconds, ``u`` uniform in
  [-1, 1) drawn from a generator seeded with ``(seed, worker, the worker's step)``: the
  same seed gives the same interleaving, another seed another one;
* events (a closure finishing, a worker failing or rejoining) are handled in time order,
  ties broken by worker index, then by the order they were planned. Wall time and thread
  scheduling play no part.
"""

from __future__ import annotations

import collections
import dataclasses
import heapq

import numpy as np

__all__ = ["Event", "Scheduler"]


@dataclasses.dataclass(order=True, frozen=True)
class Event:
    """Something that happens to ``worker`` at simulated ``time``: ``"finish"``, ``"fail"``
    (it dies mid-closure) or ``"restart"``."""

    time: float
    worker: int
    seq: int
    kind: str = dataclasses.field(compare=False)


@dataclasses.dataclass
class _Worker:
    index: int
    alive: bool = True
    busy: bool = False
    steps: int = 0  # closures this worker has started


class Scheduler:
    """Queue, worker states and the event heap (see the module docstring).

    Args:
        num_workers: workers in the cluster.
        seed: the interleaving seed.
        step_time: mean simulated seconds per closure.
        jitter: relative spread of closure durations, in [0, 1).

    Raises:
        ValueError: ``jitter`` outside [0, 1) or a non-positive ``step_time``.
    """

    def __init__(
        self, num_workers: int, seed: int = 0, step_time: float = 1.0, jitter: float = 0.5
    ) -> None:
        if not 0.0 <= jitter < 1.0 or step_time <= 0:
            raise ValueError(
                f"Need 0 <= jitter < 1 and step_time > 0, got jitter={jitter}, "
                f"step_time={step_time}."
            )
        self.now = 0.0
        self.seed = int(seed)
        self.step_time = float(step_time)
        self.jitter = float(jitter)
        self.queue: collections.deque = collections.deque()
        self.workers = [_Worker(i) for i in range(num_workers)]
        self._events: list[Event] = []
        self._seq = 0

    def duration(self, worker: int, step: int) -> float:
        """Simulated seconds of ``worker``'s ``step``-th closure."""
        u = np.random.default_rng([self.seed, worker, step]).random()
        return self.step_time * (1.0 + self.jitter * (2.0 * u - 1.0))

    def assignments(self) -> list[tuple[int, object]]:
        """Hand queued closures to idle live workers now: ``[(worker, closure), ...]``."""
        out = []
        for w in self.workers:
            if not self.queue:
                break
            if w.alive and not w.busy:
                w.busy = True
                out.append((w.index, self.queue.popleft()))
        return out

    def start_step(self, worker: int) -> int:
        """Count a closure started by ``worker``; returns its step index (from 0)."""
        w = self.workers[worker]
        w.steps += 1
        return w.steps - 1

    def plan(self, time: float, worker: int, kind: str) -> None:
        heapq.heappush(self._events, Event(time, worker, self._seq, kind))
        self._seq += 1

    def has_events(self) -> bool:
        return bool(self._events)

    def pop(self) -> Event:
        """The next event; the clock moves to its time."""
        event = heapq.heappop(self._events)
        self.now = max(self.now, event.time)
        return event

    def idle(self, worker: int) -> None:
        self.workers[worker].busy = False

    def kill(self, worker: int) -> None:
        w = self.workers[worker]
        w.alive, w.busy = False, False

    def revive(self, worker: int) -> None:
        self.workers[worker].alive = True

    def any_alive(self) -> bool:
        return any(w.alive for w in self.workers)

    def busy_count(self) -> int:
        return sum(w.busy for w in self.workers)
