"""Replay a training program for K steps under one forced all-reduce; keep its losses and weights.

:func:`replay` runs an unmodified program (a script, as ``__main__``, or a function) as a
virtual cluster (:func:`simdist.sim.launch`; one worker is a plain single-host program)
with ``SIMDIST_FORCE_ALL_REDUCE`` set to the algorithm (:mod:`simdist.collectives.forced`),
and listens on :mod:`simdist.core.step_hooks`:

* a **training step** is a ``strategy.run`` during which an optimizer applied gradients
  (``apply_gradients`` under the strategy); runs that update nothing (evaluation, metrics)
  are not steps;
* its **loss** is the sum over every replica of the worker(s) of what the replica function
  returned: a scalar, the first element of a tuple/list, or a dict's ``"loss"`` (Keras
  ``fit``'s step returns the loss first). The replicas' losses are added exactly
  (``math.fsum``), so this sum itself does not depend on the algorithm; ``None`` when the
  step returned no scalar;
* the **weights** are the values, after the step, of every variable an optimizer updated
  in it (worker 0's copies; every worker holds the same bits);
* after K steps on every worker, the next ``strategy.run`` raises :class:`StopReplay`,
  which ends the program (the replay catches it). A program that ends sooner gives fewer
  steps.

Each replay starts from a fresh process state (each worker's own random seed, Keras's
layer-name counts, devices), as a new process would, so replays differ only by the
all-reduce algorithm as long as the program is deterministic (simdist is; a program that
reads the clock or ``os.urandom`` is not).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence

import numpy as np

from simdist import settings
from simdist.core import step_hooks
from simdist.sim.launch import launch, launch_script

__all__ = ["Replay", "StopReplay", "replay"]


class StopReplay(BaseException):
    """Raised at a ``strategy.run`` once every worker has trained the replay's K steps.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that a program's ``except
    Exception`` does not swallow it.
    """


@dataclasses.dataclass(frozen=True)
class Replay:
    """One program's training under one all-reduce algorithm.

    Attributes:
        algorithm: the forced algorithm (``"exact"``: the exact sum).
        losses: per training step, the loss summed over every replica (None: none returned).
        names: the trained variables' names, in the order they were first updated.
        weights: their values after the last step (worker 0's).
        num_replicas: replicas in sync (all workers).
        num_workers: workers of the virtual cluster.
        strategy: the strategy's class name.
    """

    algorithm: str
    losses: tuple[float | None, ...]
    names: tuple[str, ...]
    weights: tuple[np.ndarray, ...]
    num_replicas: int
    num_workers: int
    strategy: str

    @property
    def steps(self) -> int:
        return len(self.losses)


def _scalar(value) -> float | None:
    """The loss in a replica function's return value, or None."""
    if isinstance(value, dict):
        value = value.get("loss")
    elif isinstance(value, (tuple, list)):
        value = value[0] if value else None
    if value is None:
        return None
    array = np.asarray(getattr(value, "_value", value))
    if array.size != 1 or array.dtype.kind not in "fiu":
        return None
    return float(array.reshape(()))


@dataclasses.dataclass
class _WorkerLog:
    losses: list = dataclasses.field(default_factory=list)  # per step: local replicas' losses
    updated: dict = dataclasses.field(default_factory=dict)  # id -> variable, this run
    weights: list = dataclasses.field(default_factory=list)  # [(name, array)] after the last
    num_replicas: int = 0
    strategy: str = ""


class _Recorder(step_hooks.Listener):
    """The :mod:`simdist.core.step_hooks` listener of one replay."""

    def __init__(self, steps: int | None) -> None:
        self.steps = steps
        self.num_workers = 1
        self.logs: dict[int, _WorkerLog] = {}
        self._lock = threading.Lock()

    def _log(self, strategy) -> _WorkerLog:
        extended = strategy.extended
        worker = int(getattr(extended, "_worker_index", 0))
        with self._lock:
            self.num_workers = max(self.num_workers, int(getattr(extended, "_num_workers", 1)))
            return self.logs.setdefault(worker, _WorkerLog())

    def run_starting(self, strategy) -> None:
        log = self._log(strategy)
        if self.steps is not None:
            with self._lock:
                done = len(self.logs) == self.num_workers and all(
                    len(other.losses) >= self.steps for other in self.logs.values()
                )
            if done:
                raise StopReplay()
        log.updated = {}

    def gradients_applied(self, strategy, variables, grads, before, aggregated) -> None:
        log = self._log(strategy)
        for variable in variables:
            log.updated.setdefault(id(variable), variable)

    def run_finished(self, strategy, results: list) -> None:
        log = self._log(strategy)
        if not log.updated:
            return  # no optimizer ran: not a training step
        log.losses.append([_scalar(r) for r in results])
        log.num_replicas = strategy.num_replicas_in_sync
        log.strategy = type(strategy).__name__
        log.weights = [(v.name, np.array(v.numpy(), copy=True)) for v in log.updated.values()]
        log.updated = {}

    def result(self, algorithm: str, target: str) -> Replay:
        if 0 not in self.logs or not self.logs[0].losses:
            raise ValueError(
                f"{target} trained no step under a strategy: no optimizer applied gradients "
                "inside strategy.run (or Keras fit). simdist sensitivity replays distributed "
                "training; run the training under a tf.distribute strategy."
            )
        steps = min(len(log.losses) for log in self.logs.values())
        losses = []
        for k in range(steps):
            parts = [v for w in sorted(self.logs) for v in self.logs[w].losses[k]]
            losses.append(None if any(v is None for v in parts) else math.fsum(parts))
        chief = self.logs[0]
        return Replay(
            algorithm=algorithm,
            losses=tuple(losses),
            names=tuple(name for name, _ in chief.weights),
            weights=tuple(array for _, array in chief.weights),
            num_replicas=chief.num_replicas,
            num_workers=self.num_workers,
            strategy=chief.strategy,
        )


def replay(
    target: str | os.PathLike | Callable[[], object],
    algorithm: str,
    *,
    steps: int | None = 10,
    workers: int = 1,
    devices_per_worker: int = 4,
    argv: Sequence[str] = (),
    quiet: bool = True,
) -> Replay:
    """Run ``target`` with every all-reduce forced to ``algorithm``; stop after ``steps``.

    Args:
        target: a script's path (run as ``__main__`` with ``sys.argv = [path, *argv]``) or
            a function (called with no arguments on every worker).
        algorithm: a name of :data:`simdist.collectives.forced.FORCEABLE`.
        steps: training steps to keep (None: until the program ends).
        workers: workers of the virtual cluster (1: a single-host program).
        devices_per_worker: virtual GPUs of each worker's host (a program that calls
            ``tf.config.set_virtual_devices`` itself decides for itself).
        argv: the script's arguments.
        quiet: hide what the program prints (shown on stderr if it raises).

    Returns:
        The :class:`Replay`.

    Raises:
        ValueError: the program trained no step under a strategy, or a bad algorithm.
        RuntimeError: a replay is already running in this process.
        Exception: what the program raised (a ``SystemExit`` with a non-zero code too).
    """
    if step_hooks.listener() is not None:
        raise RuntimeError(
            "a simdist replay or step check is already running in this process; they do not nest"
        )
    name = os.fspath(target) if not callable(target) else getattr(target, "__name__", "program")
    recorder = _Recorder(steps)
    printed = io.StringIO()
    try:
        with settings.override(force_all_reduce=algorithm), contextlib.ExitStack() as hide:
            if quiet:
                hide.enter_context(contextlib.redirect_stdout(printed))
                hide.enter_context(contextlib.redirect_stderr(printed))
            step_hooks.set_listener(recorder)
            if callable(target):
                launch(target, workers, devices_per_worker)
            else:
                launch_script(name, workers, devices_per_worker, argv=list(argv))
    except StopReplay:
        pass
    except SystemExit as exc:
        if exc.code not in (None, 0):
            _show(printed, quiet)
            raise
    except BaseException:
        _show(printed, quiet)
        raise
    finally:
        step_hooks.set_listener(None)
    return recorder.result(algorithm, name)


def _show(printed: io.StringIO, quiet: bool) -> None:
    text = printed.getvalue()
    if quiet and text:
        sys.stderr.write(f"--- the program's output (last 4000 characters) ---\n{text[-4000:]}\n")
